#include "relevance_corpus.hpp"

#include <algorithm>
#include <numeric>

#include "embedding_cache.hpp"
#include "relmem/memories/text/lexical_weighting.hpp"

namespace relmem::relevance {
namespace {

// Indices of the k highest scores of a row, best first (ties: lower index first).
std::vector<int> top_indices(const float* row, int n, int k) {
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  k = std::min(k, n);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [row](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
  order.resize(static_cast<size_t>(k));
  return order;
}

}  // namespace

namespace {

// Rows of one kind per database (its texts' `member`, in order, in `rows`), each database owning at least one row:
// its card when it has none of that kind.
void group_rows(const RowMatrix& rows, const std::vector<DatabaseTexts>& databases,
                std::vector<std::string> DatabaseTexts::*member, const RowMatrix& cards, RowMatrix& grouped,
                std::vector<int>& offsets) {
  int64_t total = 0;
  for (const auto& db : databases) total += std::max<int64_t>(1, static_cast<int64_t>((db.*member).size()));
  grouped.resize(total, cards.cols());
  offsets.assign(1, 0);
  int64_t next_source = 0, next_row = 0;
  for (size_t i = 0; i < databases.size(); ++i) {
    const auto count = static_cast<int64_t>((databases[i].*member).size());
    if (count == 0) {
      grouped.row(next_row++) = cards.row(static_cast<int64_t>(i));
    } else {
      grouped.middleRows(next_row, count) = rows.middleRows(next_source, count);
      next_row += count;
      next_source += count;
    }
    offsets.push_back(static_cast<int>(next_row));
  }
}

// Card rows first, then every database's table rows.
void split_rows(const RowMatrix& rows, const std::vector<DatabaseTexts>& databases, RowMatrix& cards,
                RowMatrix& tables, std::vector<int>& table_offsets) {
  const auto n = static_cast<int64_t>(databases.size());
  cards = rows.topRows(n);
  group_rows(rows.bottomRows(rows.rows() - n), databases, &DatabaseTexts::table_cards, cards, tables, table_offsets);
}

// (questions, databases) maxima of question . table over every database's table rows.
RowMatrix best_table_scores(const RowMatrix& questions, const RowMatrix& tables, const std::vector<int>& offsets) {
  const int64_t n = questions.rows();
  const int databases = static_cast<int>(offsets.size()) - 1;
  RowMatrix best(n, databases);
  constexpr int64_t kChunk = 1024;  // bounds the (questions x tables) product's memory
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t rows = std::min(kChunk, n - begin);
    const RowMatrix scores = questions.middleRows(begin, rows) * tables.transpose();
    for (int d = 0; d < databases; ++d) {
      const int first = offsets[static_cast<size_t>(d)], count = offsets[static_cast<size_t>(d) + 1] - first;
      best.block(begin, d, rows, 1) = scores.middleCols(first, count).rowwise().maxCoeff();
    }
  }
  return best;
}

}  // namespace

EncodedQuestions EncodedQuestions::bottom_rows(int64_t count) const {
  EncodedQuestions out;
  out.vectors = vectors.bottomRows(count);
  out.databases.assign(databases.end() - count, databases.end());
  out.raw_card = raw_card.bottomRows(count);
  out.raw_table = raw_table.bottomRows(count);
  out.lexical_card = lexical_card.bottomRows(count);
  out.lexical_table = lexical_table.bottomRows(count);
  out.raw_column = raw_column.bottomRows(count);
  out.value = value.bottomRows(count);
  out.best.assign(best.end() - count, best.end());
  return out;
}

EncodedCollection encode_collection(const Encoder& encoder, const Encoder* lexical,
                                    const std::vector<DatabaseTexts>& databases, const std::string& cache_dir) {
  std::vector<std::string> texts, lexical_texts;
  for (const auto& db : databases) {
    texts.push_back(db.card);
    lexical_texts.push_back(db.lexical_card);
  }
  std::vector<std::string> column_texts;
  for (const auto& db : databases) column_texts.insert(column_texts.end(), db.column_cards.begin(), db.column_cards.end());
  for (const auto& db : databases) {
    texts.insert(texts.end(), db.table_cards.begin(), db.table_cards.end());
    lexical_texts.insert(lexical_texts.end(), db.lexical_table_cards.begin(), db.lexical_table_cards.end());
  }
  EncodedCollection collection;
  split_rows(encode_cached(encoder, texts, cache_dir), databases, collection.cards, collection.tables,
             collection.table_offsets);
  const RowMatrix column_rows = column_texts.empty() ? RowMatrix(0, collection.cards.cols())
                                                     : encode_cached(encoder, column_texts, cache_dir);
  group_rows(column_rows, databases, &DatabaseTexts::column_cards, collection.cards, collection.columns,
             collection.column_offsets);
  for (size_t i = 0; i < databases.size(); ++i) collection.values.add(static_cast<int64_t>(i), databases[i].values);
  if (lexical) {
    const RowMatrix rows = encode_cached(*lexical, lexical_texts, cache_dir);
    collection.idf = inverse_document_frequencies(document_frequencies(rows), rows.rows());
    std::vector<int> offsets;
    split_rows(weigh_rows(rows, collection.idf), databases, collection.lexical_cards, collection.lexical_tables,
               offsets);
  }
  return collection;
}

EncodedQuestions encode_questions(const Encoder& encoder, const Encoder* lexical, const std::vector<std::string>& texts,
                                  std::vector<std::vector<int>> databases, const EncodedCollection& collection,
                                  const std::string& cache_dir) {
  EncodedQuestions q;
  q.databases = std::move(databases);
  q.vectors = encode_cached(encoder, texts, cache_dir);
  q.raw_card = q.vectors * collection.cards.transpose();
  q.raw_table = best_table_scores(q.vectors, collection.tables, collection.table_offsets);
  q.raw_column = best_table_scores(q.vectors, collection.columns, collection.column_offsets);
  q.value = RowMatrix::Zero(q.raw_card.rows(), q.raw_card.cols());
  for (size_t i = 0; i < texts.size(); ++i)
    for (const auto& [db, evidence] : collection.values.question_evidence(texts[i], collection.size()))
      q.value(static_cast<int64_t>(i), db) = evidence;
  if (lexical && collection.lexical()) {
    const RowMatrix lexical_vectors = weigh_rows(encode_cached(*lexical, texts, cache_dir), collection.idf);
    q.lexical_card = lexical_vectors * collection.lexical_cards.transpose();
    q.lexical_table = best_table_scores(lexical_vectors, collection.lexical_tables, collection.table_offsets);
  } else {
    q.lexical_card = RowMatrix::Zero(q.raw_card.rows(), q.raw_card.cols());
    q.lexical_table = q.lexical_card;
  }
  q.best.resize(static_cast<size_t>(q.raw_card.rows()));
  for (int64_t i = 0; i < q.raw_card.rows(); ++i) {
    RawSimilarities& best = q.best[static_cast<size_t>(i)];
    best = q.raw(i, 0);
    for (int d = 1; d < collection.size(); ++d) best.keep_max(q.raw(i, d));
  }
  return q;
}

RowMatrix fused_scores(const EncodedQuestions& questions, SimilarityFusion fusion, bool lexical) {
  RowMatrix scores(questions.raw_card.rows(), questions.raw_card.cols());
  for (int64_t q = 0; q < scores.rows(); ++q)
    for (int d = 0; d < static_cast<int>(scores.cols()); ++d)
      scores(q, d) = untrained_score(fusion, questions.raw(q, d), lexical);
  return scores;
}

RowMatrix model_logits(const RelevanceModel& model, const EncodedCollection& collection,
                       const EncodedQuestions& questions) {
  const RowMatrix cards_hat = model.project_databases(collection.cards);
  const RowMatrix tables_hat = model.project_databases(collection.tables);
  const RowMatrix questions_hat = model.project_questions(questions.vectors);
  const int64_t n = questions.vectors.rows();
  const int databases = collection.size();
  RowMatrix logits(n, databases);
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t q = 0; q < n; ++q) {
    std::vector<DatabaseView> views(static_cast<size_t>(databases));
    for (int d = 0; d < databases; ++d) {
      auto& view = views[static_cast<size_t>(d)];
      view.card_hat = cards_hat.row(d).data();
      view.tables_hat = tables_hat.row(collection.table_offsets[static_cast<size_t>(d)]).data();
      view.tables = collection.table_offsets[static_cast<size_t>(d) + 1] - collection.table_offsets[static_cast<size_t>(d)];
      view.raw = questions.raw(q, d);
      view.best = questions.best[static_cast<size_t>(q)];
    }
    const std::vector<float> row = model.logits(questions_hat.row(q).data(), views);
    std::copy(row.begin(), row.end(), logits.row(q).data());
  }
  return logits;
}

RankingMetrics ranking_metrics(const RowMatrix& scores, const std::vector<std::vector<int>>& databases) {
  RankingMetrics m;
  double hit1 = 0, hit5 = 0, all5 = 0;
  for (int64_t q = 0; q < scores.rows(); ++q) {
    const auto& gold = databases[static_cast<size_t>(q)];
    const std::vector<int> top = top_indices(scores.row(q).data(), static_cast<int>(scores.cols()), 5);
    auto in_top = [&](int db, size_t k) { return std::find(top.begin(), top.begin() + std::min(k, top.size()), db) != top.begin() + std::min(k, top.size()); };
    if (gold.size() == 1) {
      ++m.singles;
      hit1 += in_top(gold[0], 1) ? 1 : 0;
      hit5 += in_top(gold[0], 5) ? 1 : 0;
    } else {
      ++m.composites;
      all5 += std::all_of(gold.begin(), gold.end(), [&](int db) { return in_top(db, 5); }) ? 1 : 0;
    }
  }
  if (m.singles) {
    m.recall_at_1 = hit1 / static_cast<double>(m.singles);
    m.recall_at_5 = hit5 / static_cast<double>(m.singles);
  }
  if (m.composites) m.all_in_top5 = all5 / static_cast<double>(m.composites);
  return m;
}

std::vector<ScoredQuestion> scored_questions(const RowMatrix& scores, const std::vector<std::vector<int>>& databases,
                                             int candidates) {
  std::vector<ScoredQuestion> out;
  for (int64_t q = 0; q < scores.rows(); ++q) {
    const auto& gold = databases[static_cast<size_t>(q)];
    ScoredQuestion scored;
    scored.gold = static_cast<int64_t>(gold.size());
    for (int db : top_indices(scores.row(q).data(), static_cast<int>(scores.cols()), candidates)) {
      scored.values.push_back(scores(q, db));
      scored.relevant.push_back(std::find(gold.begin(), gold.end(), db) != gold.end() ? 1 : 0);
    }
    out.push_back(std::move(scored));
  }
  return out;
}

}  // namespace relmem::relevance
