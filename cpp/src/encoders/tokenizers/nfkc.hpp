#pragma once
// Unicode normalization form KC (compatibility decomposition, canonical ordering, canonical composition), with the
// tables of node's ICU so that it matches the USE-lite reference's String.prototype.normalize("NFKC").
#include <string>

namespace relmem::nfkc {

std::u32string normalize(const std::u32string& text);

}  // namespace relmem::nfkc
