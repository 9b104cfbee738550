#pragma once
// Lexical matching of stored cell values against how people write them: normalization (case, accents,
// punctuation, spacing), character trigrams, edit distance, token overlap and abbreviation heuristics.
// All functions work on UTF-8 and count code points, never bytes.
#include <cstdint>
#include <string>
#include <vector>

namespace relmem {

// Lower-cased, accents folded (é -> e, ß -> ss), '&' written as "and", apostrophes dropped ("Mary's" -> "marys"),
// every other punctuation or symbol turned into a space, spaces collapsed and trimmed.
std::string normalize_value(const std::string& text);

// The words of a normalized text.
std::vector<std::string> value_tokens(const std::string& normalized);

// The normalized text without spaces ("New York" and "NewYork" share it).
std::string compact_value(const std::string& normalized);

// The compact form without the function words "and", "of", "the" ("R&D" and "R and D" -> "rd").
std::string content_key(const std::vector<std::string>& tokens);

// A light English plural stemmer for token matching ("cities" -> "city", "dramas" -> "drama").
std::string stem_token(const std::string& token);

bool is_function_word(const std::string& token);

// The first letter of each token ("los angeles" -> "la"), optionally skipping function words.
std::string initials_text(const std::vector<std::string>& tokens, bool skip_function_words);

// Sorted, unique hashes of the character 3-grams of " " + normalized + " ".
std::vector<uint32_t> trigram_set(const std::string& normalized);
// Dice coefficient of two sorted trigram sets: 2|A∩B| / (|A|+|B|).
double trigram_dice(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

std::vector<uint32_t> code_points(const std::string& text);
// Optimal string alignment distance (Levenshtein plus adjacent transposition) in code points.
int edit_distance(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
// 1 - distance / longer length; 1 for two empty strings.
double edit_similarity(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

// Soft F1 of two token lists after stemming: equal stems count 1, near-equal tokens (edit similarity >= 0.75,
// both at least 4 letters) count their similarity.
double token_similarity(const std::vector<std::string>& a, const std::vector<std::string>& b);

// How well one text reads as an abbreviation of the other, in [0, 1], from their tokens:
// initials ("LA" / "Los Angeles", "R&D" / "Research and Development") 0.95; a prefix of at most 70% of the length
// ("Fin" / "Finance") 0.9 for three letters or more, and for one-word values 0.8 for two letters, 0.75 for one
// ("F" / "female"); a word-by-word abbreviation ("Intl Business" / "International Business") 0.88; for one word, a
// prefix then consonants in order ("Mktg" / "Marketing") 0.75 + 0.1 x the share it keeps of the consonants it passes
// over (0.85 for "Brnd" / "Brander", which drops only vowels; 0.81 for "Mktg"), 0.6 for two letters; initials of
// some words among the same others ("IT Staff" / "Information Technology Staff") 0.9. A prefix that ends
// where a word ends is a dropped word, not an abbreviation ("Florida" / "Florida State": 0).
double abbreviation_score(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace relmem
