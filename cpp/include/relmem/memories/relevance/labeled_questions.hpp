#pragma once
// Questions labelled with the database(s) that answer them, and composite questions built from several of them.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace relmem {

struct LabeledQuestion {
  std::string text;
  std::vector<std::string> databases;  // one for an ordinary question, several for a composite one
  std::vector<std::string> parts;      // a composite's questions (make_composites), in order; empty otherwise
};

// A JSON list of objects with "question" and either "db_id" (string) or "db_ids" (list), e.g. Spider's
// train_spider.json / dev.json. relmem::Error names the file and the entry on malformed input.
std::vector<LabeledQuestion> load_labeled_questions(const std::string& path);

// How the parts of a composite question are joined.
enum class CompositeStyle {
  LargerNumber,  // "Which question has a larger number as its answer. Q1: ...; Q2: ..." (the paper's template)
  Concatenate,   // "... ..."
  AndAlso,       // "... Also, ..."
};
CompositeStyle parse_composite_style(const std::string& name);  // "larger-number", "concatenate", "and-also"
std::string compose_question(const std::vector<std::string>& parts, CompositeStyle style);

// How composite questions are drawn: min_parts..max_parts parts (uniformly), each from a different database, joined
// in one of `styles` (uniformly).
struct CompositeOptions {
  int min_parts = 2;
  int max_parts = 3;
  std::vector<CompositeStyle> styles{CompositeStyle::LargerNumber, CompositeStyle::Concatenate,
                                     CompositeStyle::AndAlso};
};

// `count` composite questions from single-database questions. Deterministic for a given rng state. Empty when fewer
// than two databases are present; parts are capped at the number of databases.
std::vector<LabeledQuestion> make_composites(const std::vector<LabeledQuestion>& singles, int64_t count,
                                             const CompositeOptions& options, std::mt19937_64& rng);

}  // namespace relmem
