#pragma once
// Checking and repairing UTF-8: text from files, databases and command lines may hold any bytes.
#include <string>
#include <string_view>

namespace relmem {

// The length of the well-formed UTF-8 sequence starting at byte `i` of `text` (Unicode's table 3-7: no overlong
// forms, surrogates or code points past U+10FFFF), 0 when none starts there.
size_t utf8_sequence_length(std::string_view text, size_t i);

// The offset of the first byte that does not start a well-formed UTF-8 sequence (overlong forms, surrogates and
// code points past U+10FFFF are ill-formed); std::string::npos when the whole text is valid.
size_t invalid_utf8_offset(std::string_view text);
inline bool is_valid_utf8(std::string_view text) { return invalid_utf8_offset(text) == std::string::npos; }

// The text with every ill-formed sequence replaced by U+FFFD; valid text comes back unchanged.
std::string valid_utf8(std::string_view text);

// "byte 0xFF at offset 8": where a text stops being UTF-8, for messages.
std::string describe_invalid_utf8(std::string_view text);

}  // namespace relmem
