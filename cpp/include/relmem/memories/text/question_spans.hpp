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

// The normalized text (normalize_value) of every span, without repeats.
std::vector<std::string> question_phrases(const std::string& question, int max_words);

}  // namespace relmem
