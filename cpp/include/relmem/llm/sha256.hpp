#pragma once
// SHA-256 (FIPS 180-4), for response-cache keys.
#include <string>

namespace relmem {

std::string sha256_hex(const std::string& data);  // 64 lowercase hex digits

}  // namespace relmem
