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

// A lower-case word that WordNet does not list ("countrylanguage"), as the two words it does list that it is made of
// ("country language"): each part a listed word of at least 3 letters, or a one-letter initial before one ("dphone" ->
// "d phone"), or "id" after one ("yearid" -> "year id", not "yea rid"). A split ending in "id" comes first, then
// parts listed as written ("create date", not "created ate"), then the longer second part ("hire date", not "hired
// ate"). "" when the word is listed, a known abbreviation ("fname") or has no such split.
std::string compound_split(const std::string& word, const WordNet& wordnet);

// humanize_identifier() with each compound word split ("countrylanguage" -> "country language"); unchanged without
// WordNet.
std::string readable_identifier(const std::string& identifier, const WordNet* wordnet);

// The expansions and synonyms (the `senses` most frequent senses of each word, at most `per_word` of them) of the
// identifiers' words, without the identifiers' own words, each once, joined by spaces. "" without WordNet.
std::string schema_synonyms(const std::vector<std::string>& identifiers, const WordNet* wordnet, int senses = 1,
                            int per_word = 6);

}  // namespace relmem
