#pragma once
// UTF-8 decoding/encoding and the per-code-point Unicode operations of the BERT basic tokenizer.
#include <string>
#include <vector>

#include "unicode_data.hpp"

namespace relmem::unicode {

// Malformed UTF-8 bytes decode to U+FFFD, which the tokenizer's text cleaning drops.
std::u32string decode_utf8(const std::string& text);
void append_utf8(char32_t code_point, std::string& out);

CharClass char_class(char32_t code_point);
bool is_punctuation(char32_t code_point);  // BERT's definition: Unicode P* plus every ASCII non-alphanumeric symbol
bool is_cjk_ideograph(char32_t code_point);

// Python's str.lower() of one code point (full mapping, so U+0130 becomes two code points).
void append_lower(char32_t code_point, std::u32string& out);
// NFD of one code point, appended without its nonspacing marks (Mn): BERT's accent stripping.
void append_without_accents(char32_t code_point, std::u32string& out);

}  // namespace relmem::unicode
