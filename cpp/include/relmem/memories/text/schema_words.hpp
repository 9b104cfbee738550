#pragma once
// Other words for the words of schema names, so that a question naming a table or column differently ("vocalists"
// for singer, "nation" for country, "first name" for stu_fname) still finds it: identifiers are split into words
// (CountryName -> country name), common abbreviations expanded (fname -> first name) and each word's WordNet
// synonyms added.
#include <string>
#include <vector>

#include "relmem/memories/text/wordnet.hpp"

namespace relmem {

// The lower-case words of an identifier: split at underscores, hyphens, spaces and lower-to-upper case changes, with
// abbreviations expanded ("stu_fname" -> "stu", "student", "fname", "first", "name").
std::vector<std::string> identifier_words(const std::string& identifier);

// The expansions and synonyms (the `senses` most frequent senses of each word, at most `per_word` of them) of the
// identifiers' words, without the identifiers' own words, each once, joined by spaces. "" without WordNet.
std::string schema_synonyms(const std::vector<std::string>& identifiers, const WordNet* wordnet, int senses = 1,
                            int per_word = 6);

}  // namespace relmem
