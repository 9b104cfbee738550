#include "utf8.hpp"

#include <cstdio>

namespace relmem {

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return length;
}

size_t invalid_utf8_offset(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    if (!length) return i;
    i += length;
  }
  return std::string::npos;
}

std::string valid_utf8(std::string_view text) {
  size_t bad = invalid_utf8_offset(text);
  if (bad == std::string::npos) return std::string(text);
  std::string out(text.substr(0, bad));
  for (size_t i = bad; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    if (length) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::string describe_invalid_utf8(std::string_view text) {
  const size_t at = invalid_utf8_offset(text);
  if (at == std::string::npos) return "valid UTF-8";
  char buf[64];
  std::snprintf(buf, sizeof buf, "byte 0x%02X at offset %zu", static_cast<unsigned char>(text[at]), at);
  return buf;
}

}  // namespace relmem
