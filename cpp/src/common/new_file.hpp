#pragma once
// The C++ side of relmem's one way of writing a file (python/relmem/outputs.py, docs/hardening.md): the bytes go
// into a temporary sibling with a name of its own (".<name>.<random>.tmp", made by mkstemps, so no existing file is
// ever truncated), which is flushed and renamed onto the path once complete. A failed write leaves the path as it
// was.
#include <string>

namespace relmem {

// Creates an empty temporary sibling of `path` and returns its path; throws relmem::Error naming `kind` and `path`.
std::string make_temporary_sibling(const std::string& path, const std::string& kind);

// Flushes `temporary` to disk and renames it onto `path`; on failure removes it and throws relmem::Error.
void move_into_place(const std::string& temporary, const std::string& path, const std::string& kind);

// Writes `bytes` to `path` through a temporary sibling.
void write_file_atomically(const std::string& path, const std::string& bytes, const std::string& kind);

}  // namespace relmem
