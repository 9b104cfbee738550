// The selection memory's collection statistics: each database's hubness (how often it ranks high for questions
// about other databases) and the lexical weights of words across the collection.
#include "relmem/memories/selection/selection_memory.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "../../common/checksummed_file.hpp"
#include "../../common/parallel_for.hpp"
#include "relmem/encoders/use_lite.hpp"
#include "relmem/index/topk.hpp"
#include "relmem/memories/relevance/database_texts.hpp"
#include "relmem/memories/text/lexical_weighting.hpp"
#include "relmem/memories/text/question_parts.hpp"
#include "relmem/memories/text/question_spans.hpp"
#include "relmem/memories/text/wordnet.hpp"

#include "selection_terms.hpp"

namespace relmem {

using namespace selection_detail;

std::shared_ptr<const std::unordered_map<int64_t, float>> SelectionMemory::hubness() const {
  std::lock_guard<std::mutex> lock(hubness_cache_->mutex);
  if (hubness_cache_->of_card) return hubness_cache_->of_card;
  auto out = std::make_shared<std::unordered_map<int64_t, float>>();
  auto keep = [&]() -> std::shared_ptr<const std::unordered_map<int64_t, float>> {
    hubness_cache_->of_card = out;
    return out;
  };
  if (static_cast<int64_t>(entries_.size()) > options_.pool) return keep();

  // The reference questions: the kHubnessReferences forms whose "database#number" hashes lowest.
  std::vector<std::pair<uint64_t, int64_t>> forms;  // (hash, form id)
  for (const auto& [name, entry] : entries_) {
    for (int64_t f = 0; f < entry.forms; ++f) {
      const std::string key = name + "#" + std::to_string(f);
      forms.emplace_back(checksum_of_bytes(key.data(), key.size(), 1), entry.first_form + f);
    }
  }
  const size_t references = std::min(forms.size(), kHubnessReferences);
  if (references == 0) return keep();
  std::partial_sort(forms.begin(), forms.begin() + static_cast<int64_t>(references), forms.end());
  const int d = encoder_->dim();
  RowMatrix queries(static_cast<int64_t>(references), d);
  for (size_t r = 0; r < references; ++r)
    queries.row(static_cast<int64_t>(r)) =
        Eigen::Map<const Eigen::RowVectorXf>(forms_.reconstruct(forms[r].second).data(), d);

  // Each reference question's whole-question cosines with every database: its card and the best of its tables,
  // columns and forms, weighed as the untrained score weighs them.
  std::vector<const Entry*> entries;
  std::vector<int64_t> card_ids, table_ids, column_ids, form_ids;
  for (const auto& [_, entry] : entries_) {
    entries.push_back(&entry);
    card_ids.push_back(entry.id);
    append_ids(entry.first_table, static_cast<int64_t>(entry.tables.size()), table_ids);
    append_ids(entry.first_column, entry.columns, column_ids);
    append_ids(entry.first_form, entry.forms, form_ids);
  }
  const auto n = static_cast<int64_t>(references);
  auto products = [&](const VectorIndex& index, const std::vector<int64_t>& ids) {
    RowMatrix scores(n, static_cast<int64_t>(ids.size()));
    index.inner_products(queries.data(), n, ids.data(), static_cast<int64_t>(ids.size()), scores.data());
    return scores;
  };
  const RowMatrix cards = products(cards_, card_ids), tables = products(tables_, table_ids),
                  columns = products(columns_, column_ids), form_scores = products(forms_, form_ids);
  std::vector<double> mean(entries.size(), 0.0);
  int64_t table = 0, column = 0, form = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = *entries[i];
    const auto table_count = static_cast<int64_t>(entry.tables.size());
    for (int64_t r = 0; r < n; ++r) {
      RawSimilarities raw;  // as candidates() fills them, the question's text aside
      set_whole_question_terms(raw, cards(r, static_cast<int64_t>(i)), tables.data() + r * tables.cols() + table,
                               table_count, columns.data() + r * columns.cols() + column, entry.columns,
                               form_scores.data() + r * form_scores.cols() + form, entry.forms);
      mean[i] += untrained_score(options_.fusion, raw, lexical_ != nullptr);
    }
    mean[i] /= static_cast<double>(n);
    table += table_count;
    column += entry.columns;
    form += entry.forms;
  }
  const double average = std::accumulate(mean.begin(), mean.end(), 0.0) / static_cast<double>(mean.size());
  for (size_t i = 0; i < entries.size(); ++i) (*out)[entries[i]->id] = static_cast<float>(mean[i] - average);
  return keep();
}

std::shared_ptr<const SelectionMemory::LexicalWeights> SelectionMemory::lexical_weights() const {
  std::lock_guard<std::mutex> lock(lexical_cache_->mutex);
  if (lexical_cache_->weights) return lexical_cache_->weights;
  auto weights = std::make_shared<LexicalWeights>();
  std::vector<int64_t> df = lexical_cards_.document_frequency();
  const auto& table_df = lexical_tables_.document_frequency();
  for (size_t j = 0; j < df.size(); ++j) df[j] += table_df[j];
  weights->idf = inverse_document_frequencies(df, lexical_cards_.size() + lexical_tables_.size());
  if (static_cast<int64_t>(entries_.size()) <= options_.pool) {
    std::vector<std::pair<const SparseVectors*, int64_t>> rows;
    for (const auto& [_, entry] : entries_) {
      weights->first_slot[entry.id] = static_cast<int64_t>(rows.size());
      rows.emplace_back(&lexical_cards_, entry.id);
      for (size_t t = 0; t < entry.tables.size(); ++t)
        rows.emplace_back(&lexical_tables_, entry.first_table + static_cast<int64_t>(t));
    }
    weights->postings = std::make_unique<const SparsePostings>(lexical_->dim(), rows, weights->idf);
  }
  lexical_cache_->weights = weights;
  return weights;
}

}  // namespace relmem
