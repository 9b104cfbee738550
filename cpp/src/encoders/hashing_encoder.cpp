#include "relmem/encoders/hashing_encoder.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_map>

#include "../common/utf8.hpp"

namespace relmem {
namespace {

constexpr float kWordWeight = 1.0f;
constexpr float kBigramWeight = 0.5f;
constexpr float kCharGramWeight = 0.35f;

uint64_t fnv1a(const std::string& text, uint64_t seed) {
  uint64_t hash = 0xcbf29ce484222325ULL ^ seed;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

// Splits UTF-8 into code points, each kept as its byte sequence; a malformed byte stands alone.
std::vector<std::string> code_points(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const size_t len = std::max<size_t>(1, utf8_sequence_length(text, i));
    out.push_back(text.substr(i, len));
    i += len;
  }
  return out;
}

bool is_word_char(const std::string& cp) {
  if (cp.size() > 1) return true;  // non-ASCII letters and symbols count as word characters
  const unsigned char c = cp[0];
  return std::isalnum(c);
}

// Words are runs of letters/digits; ASCII is lower-cased and camelCase is split ("StadiumID" -> "stadium", "id").
std::vector<std::vector<std::string>> words_of(const std::string& text) {
  std::vector<std::vector<std::string>> words;
  std::vector<std::string> current;
  bool previous_lower = false;
  for (const auto& cp : code_points(text)) {
    if (!is_word_char(cp)) {
      if (!current.empty()) words.push_back(std::move(current));
      current.clear();
      previous_lower = false;
      continue;
    }
    const unsigned char c = cp[0];
    const bool upper = cp.size() == 1 && std::isupper(c);
    if (upper && previous_lower && !current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
    current.push_back(cp.size() == 1 ? std::string(1, static_cast<char>(std::tolower(c))) : cp);
    previous_lower = cp.size() == 1 && (std::islower(c) || std::isdigit(c));
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

std::string join(const std::vector<std::string>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) out += cps[i];
  return out;
}

}  // namespace

HashingEncoder::HashingEncoder(int dim) : dim_(dim) {
  if (dim <= 0) throw Error("hashing encoder dimension must be positive, got " + std::to_string(dim));
}

void HashingEncoder::encode_into(const std::string& text, float* out) const {
  std::unordered_map<std::string, float> features;
  const auto words = words_of(text);
  std::string previous;
  for (const auto& word : words) {
    const std::string w = join(word, 0, word.size());
    features["w:" + w] += kWordWeight;
    if (!previous.empty()) features["b:" + previous + " " + w] += kBigramWeight;
    previous = w;
    std::vector<std::string> padded{"<"};
    padded.insert(padded.end(), word.begin(), word.end());
    padded.push_back(">");
    for (size_t n = 3; n <= 5; ++n)
      for (size_t i = 0; i + n <= padded.size(); ++i) features["c:" + join(padded, i, i + n)] += kCharGramWeight;
  }
  std::fill(out, out + dim_, 0.0f);
  for (const auto& [feature, count] : features) {
    const uint64_t h = fnv1a(feature, 0);
    const float sign = (h >> 63) ? -1.0f : 1.0f;
    out[h % static_cast<uint64_t>(dim_)] += sign * std::log1p(count);  // sublinear: repeats add little
  }
  double norm = 0;
  for (int i = 0; i < dim_; ++i) norm += static_cast<double>(out[i]) * out[i];
  if (norm > 0) {
    const float scale = static_cast<float>(1.0 / std::sqrt(norm));
    for (int i = 0; i < dim_; ++i) out[i] *= scale;
  }
}

RowMatrix HashingEncoder::encode(const std::vector<std::string>& texts) const {
  RowMatrix out(static_cast<Eigen::Index>(texts.size()), dim_);
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t i = 0; i < static_cast<int64_t>(texts.size()); ++i) encode_into(texts[i], out.row(i).data());
  return out;
}

}  // namespace relmem
