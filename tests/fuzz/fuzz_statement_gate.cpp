// libFuzzer target for the executor's statement gate alone (statement_gate_properties.hpp): fast enough for tens of
// millions of inputs, where the parser target runs a few thousand a second.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "statement_gate_properties.hpp"

namespace {

[[noreturn]] void fail(const char* property, const std::string& sql, const std::string& detail) {
  std::fprintf(stderr, "property violated: %s\ninput: %s\ndetail: %s\n", property, sql.c_str(), detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_statement_gate(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
