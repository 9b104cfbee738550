#pragma once
// The texts a question is scored by in the selection memory. A composite question asks several things that
// different databases answer, and its whole-text embedding lands between them; scoring each part on its own finds
// every database it needs.
#include <string>
#include <vector>

namespace relmem {

// With two or more "Q1:", "Q2:", ... markers (the paper's composite template), the text after each marker; else just
// the question. Sentences are not split: an ordinary question's follow-up sentence ("Give me the shop names.")
// names no database of its own, and scoring it alone costs recall (Spider dev recall@1 0.837 -> 0.827).
std::vector<std::string> question_parts(const std::string& question);

}  // namespace relmem
