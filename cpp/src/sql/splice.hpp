#pragma once
// Text edits spliced into SQL, every other byte kept as written: what the static repairs share.
#include <cstddef>
#include <string>
#include <vector>

namespace relmem::sql {

struct TextEdit {
  size_t start = 0;  // [start, end) of the original text is replaced by `text`; start == end inserts it
  size_t end = 0;
  std::string text;
};

// `text` with `edits` applied; the edits are in source order and do not overlap.
inline std::string splice(const std::string& text, const std::vector<TextEdit>& edits) {
  std::string out;
  size_t copied = 0;
  for (const TextEdit& edit : edits) {
    out.append(text, copied, edit.start - copied);
    out += edit.text;
    copied = edit.end;
  }
  out.append(text, copied, std::string::npos);
  return out;
}

}  // namespace relmem::sql
