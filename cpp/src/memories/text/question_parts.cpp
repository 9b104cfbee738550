#include "relmem/memories/text/question_parts.hpp"

#include <cctype>

namespace relmem {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Without surrounding spaces and the ';' that joins the template's parts.
std::string trimmed(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && (is_space(text[begin]) || text[begin] == ';')) ++begin;
  while (end > begin && (is_space(text[end - 1]) || text[end - 1] == ';')) --end;
  return text.substr(begin, end - begin);
}

// End of a "Q<digits>:" marker starting at i (at a word start), or npos.
size_t marker_end(const std::string& text, size_t i) {
  if (i > 0 && !is_space(text[i - 1]) && text[i - 1] != ';') return std::string::npos;
  if (text[i] != 'Q') return std::string::npos;
  size_t j = i + 1;
  while (j < text.size() && is_digit(text[j])) ++j;
  if (j == i + 1 || j >= text.size() || text[j] != ':') return std::string::npos;
  return j + 1;
}

std::vector<std::string> marked_parts(const std::string& question) {
  std::vector<std::string> parts;
  size_t start = std::string::npos;
  for (size_t i = 0; i < question.size(); ++i) {
    const size_t end = marker_end(question, i);
    if (end == std::string::npos) continue;
    if (start != std::string::npos) parts.push_back(trimmed(question.substr(start, i - start)));
    start = end;
    i = end - 1;
  }
  if (start != std::string::npos) parts.push_back(trimmed(question.substr(start)));
  std::vector<std::string> out;
  for (auto& part : parts)
    if (!part.empty()) out.push_back(std::move(part));
  return out;
}

}  // namespace

std::vector<std::string> question_parts(const std::string& question) {
  std::vector<std::string> marked = marked_parts(question);
  if (marked.size() >= 2) return marked;
  return {question};
}

}  // namespace relmem
