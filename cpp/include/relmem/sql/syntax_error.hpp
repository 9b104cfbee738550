#pragma once
// The error raised for SQL that cannot be tokenized or parsed: a relmem::Error that knows where it happened.
#include <cstddef>
#include <string>

#include "relmem/common.hpp"

namespace relmem::sql {

class SyntaxError : public Error {
 public:
  // The message names the line and column of `offset` in `sql` and quotes the text found there.
  SyntaxError(const std::string& sql, size_t offset, const std::string& problem);
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

}  // namespace relmem::sql
