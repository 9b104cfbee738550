#pragma once
// Phrases of a question that may name a stored value: runs of up to N words that neither start nor end with a
// function word ("how", "the", "of", "number"...), plus quoted text.
#include <cstddef>
#include <string>
#include <vector>

namespace relmem {

struct QuestionSpan {  // bytes [start, end) of the question
  size_t start, end;
};

// Sorted by start, then end; unique.
std::vector<QuestionSpan> question_spans(const std::string& question, int max_words);

// Whether the span names something: quoted, or starting with a capital letter that does not start a sentence
// ("How many people live in Gelderland district?").
bool is_named(const std::string& question, const QuestionSpan& span);

// Whether a span reads as a name, which an abbreviation may stand for or be: one word in capitals ("LA", "NYC"),
// quoted text, or words that all start with a capital ("Los Angeles"; "of", "and", "the" aside), at least two when
// the first starts a sentence. Most question words are not ("people attend" is not 'PA').
bool is_proper_name(const std::string& question, const QuestionSpan& span);

// The normalized text (normalize_value) of every span, without repeats.
std::vector<std::string> question_phrases(const std::string& question, int max_words);

}  // namespace relmem
