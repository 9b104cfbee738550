#pragma once
// The texts a question is scored by in the selection memory. A question with several parts asks several things
// that different databases may answer, and its whole-text embedding lands between them; scoring each part on its own
// finds every database it needs (the selection memory scores the whole question too, so a single question cut in
// two keeps its ranking).
#include <string>
#include <vector>

namespace relmem {

// The parts of a question, in order; just the question when it has one part. Tried in this order:
//  - two or more "Q1:", "Q2:", ... markers (the paper's composite template): the text after each marker;
//  - two or more numbered or listed parts counting up from 1 or a ("1.", "2)", "(3)", "a)"; the first at the start
//    of the text, of a line or of a sentence), or bullets ("- ", "* " at line starts): the text after each marker
//    (a lead-in before the first one is dropped);
//  - sentences (ending in '?' or '!', or in '.' before a capital letter, a quote or a question word such as "how";
//    not after abbreviations such as "e.g." or initials; or without a full stop, where a capitalized question word
//    follows a lower-case word: "... of debates What is ..."), lines, and clauses joined by "and also" / "; also";
//    a leading "Also," is dropped.
// Sentence parts of fewer than three words ("Sort them.") stay with the part before them.
struct QuestionParts {
  std::vector<std::string> texts;
  bool marked = false;  // split at template or list markers: the asker set the parts apart
};
QuestionParts split_question(const std::string& question);
// split_question(question).texts.
std::vector<std::string> question_parts(const std::string& question);

}  // namespace relmem
