#include "relevance_corpus.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "embedding_cache.hpp"
#include "relmem/memories/relevance/selection_metrics.hpp"

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

// A selection memory over the encoded rows: `rows` and `lexical_rows` hold every card, then every table (as
// split_rows reads them), `columns` every column, `forms` every question form.
std::unique_ptr<SelectionMemory> memory_of(const Encoder& encoder, const Encoder* lexical,
                                           const std::vector<DatabaseTexts>& databases, const RowMatrix& rows,
                                           const RowMatrix& lexical_rows, const RowMatrix& columns,
                                           const RowMatrix& forms) {
  SelectionOptions options;
  options.lexical_encoder = lexical ? lexical->name() : "";
  // The encoder outlives the memory (both live within one training run).
  auto memory = std::make_unique<SelectionMemory>(std::shared_ptr<const Encoder>(&encoder, [](const Encoder*) {}),
                                                  options);
  const auto n = static_cast<int64_t>(databases.size());
  int64_t next_table = n, next_column = 0, next_form = 0;
  for (int64_t i = 0; i < n; ++i) {
    const DatabaseTexts& db = databases[static_cast<size_t>(i)];
    const auto tables = static_cast<int64_t>(db.table_cards.size());
    const auto column_count = static_cast<int64_t>(db.column_cards.size());
    const RowMatrix table_rows = rows.middleRows(next_table, tables);
    const RowMatrix column_rows = columns.middleRows(next_column, column_count);
    const auto form_count = static_cast<int64_t>(db.question_forms.size());
    const RowMatrix form_rows = forms.middleRows(next_form, form_count);
    RowMatrix lexical_tables;
    if (lexical) lexical_tables = lexical_rows.middleRows(next_table, tables);
    memory->add_vectors(db.name, rows.row(i).data(), db.table_names, table_rows,
                        lexical ? lexical_rows.row(i).data() : nullptr, lexical ? &lexical_tables : nullptr,
                        &column_rows, db.values, db.table_columns, &form_rows);
    next_table += tables;
    next_column += column_count;
    next_form += form_count;
  }
  return memory;
}

}  // namespace

EncodedQuestions EncodedQuestions::bottom_rows(int64_t count) const {
  EncodedQuestions out;
  out.vectors = vectors.bottomRows(count);
  out.databases.assign(databases.end() - count, databases.end());
  out.databases_per_question = databases_per_question;
  const auto first = static_cast<int64_t>(cell(vectors.rows() - count, 0));
  out.raws.assign(raws.begin() + first, raws.end());
  out.standings.assign(standings.begin() + first, standings.end());
  out.candidates.assign(candidates.begin() + first, candidates.end());
  out.best.assign(best.end() - count, best.end());
  return out;
}

EncodedCollection encode_collection(const Encoder& encoder, const Encoder* lexical,
                                    const std::vector<DatabaseTexts>& databases, const std::string& cache_dir) {
  std::vector<std::string> texts, lexical_texts, column_texts, form_texts;
  for (const auto& db : databases) {
    texts.push_back(db.card);
    lexical_texts.push_back(db.lexical_card);
    column_texts.insert(column_texts.end(), db.column_cards.begin(), db.column_cards.end());
    form_texts.insert(form_texts.end(), db.question_forms.begin(), db.question_forms.end());
  }
  for (const auto& db : databases) {
    texts.insert(texts.end(), db.table_cards.begin(), db.table_cards.end());
    lexical_texts.insert(lexical_texts.end(), db.lexical_table_cards.begin(), db.lexical_table_cards.end());
  }
  EncodedCollection collection;
  const RowMatrix rows = encode_cached(encoder, texts, cache_dir);
  split_rows(rows, databases, collection.cards, collection.tables, collection.table_offsets);
  const RowMatrix column_rows = column_texts.empty() ? RowMatrix(0, collection.cards.cols())
                                                     : encode_cached(encoder, column_texts, cache_dir);
  const RowMatrix form_rows = form_texts.empty() ? RowMatrix(0, collection.cards.cols())
                                                 : encode_cached(encoder, form_texts, cache_dir);
  const RowMatrix lexical_rows = lexical ? encode_cached(*lexical, lexical_texts, cache_dir) : RowMatrix();
  collection.memory = memory_of(encoder, lexical, databases, rows, lexical_rows, column_rows, form_rows);
  // The model projects the table rows the memory serves from (int8 by default), so that training and serving agree.
  for (size_t i = 0; i < databases.size(); ++i) {
    const RowMatrix stored = collection.memory->vectors(databases[i].name).tables;
    collection.tables.middleRows(collection.table_offsets[i], stored.rows()) = stored;
  }
  for (size_t i = 0; i < databases.size(); ++i) collection.index_of[databases[i].name] = static_cast<int>(i);
  return collection;
}

EncodedQuestions encode_questions(const Encoder& encoder, const std::vector<std::string>& texts,
                                  std::vector<std::vector<int>> databases, const EncodedCollection& collection,
                                  const std::string& cache_dir) {
  EncodedQuestions q;
  q.databases = std::move(databases);
  q.vectors = encode_cached(encoder, texts, cache_dir);
  const auto n = static_cast<int64_t>(texts.size());
  const int m = collection.size();
  q.databases_per_question = m;
  q.raws.assign(static_cast<size_t>(n) * static_cast<size_t>(m), RawSimilarities{});
  q.standings.assign(q.raws.size(), PoolStanding{});
  q.candidates.assign(q.raws.size(), 0);
  const std::vector<QuestionSimilarities> similarities = collection.memory->similarities(texts, &q.vectors);
  for (int64_t i = 0; i < n; ++i) {
    const QuestionSimilarities& s = similarities[static_cast<size_t>(i)];
    for (size_t c = 0; c < s.databases.size(); ++c) {
      const size_t cell = q.cell(i, collection.index_of.at(s.databases[c]));
      q.raws[cell] = s.raw[c];
      q.standings[cell] = s.standings[c];
      q.candidates[cell] = 1;
    }
    q.best.push_back(s.best);
  }
  return q;
}

RowMatrix fused_scores(const EncodedQuestions& questions, SimilarityFusion fusion, bool lexical) {
  RowMatrix scores(questions.vectors.rows(), questions.databases_per_question);
  for (int64_t q = 0; q < scores.rows(); ++q)
    for (int d = 0; d < static_cast<int>(scores.cols()); ++d)
      scores(q, d) = questions.is_candidate(q, d) ? untrained_score(fusion, questions.raw(q, d), lexical)
                                                  : -std::numeric_limits<float>::infinity();
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
    std::vector<DatabaseView> views;
    std::vector<int> scored;
    for (int d = 0; d < databases; ++d) {
      if (!questions.is_candidate(q, d)) continue;
      DatabaseView view;
      view.card_hat = cards_hat.row(d).data();
      view.tables_hat = tables_hat.row(collection.table_offsets[static_cast<size_t>(d)]).data();
      view.tables = collection.table_offsets[static_cast<size_t>(d) + 1] - collection.table_offsets[static_cast<size_t>(d)];
      view.raw = questions.raw(q, d);
      view.best = questions.best[static_cast<size_t>(q)];
      view.standing = questions.standing(q, d);
      views.push_back(view);
      scored.push_back(d);
    }
    const std::vector<float> row = model.logits(questions_hat.row(q).data(), views);
    logits.row(q).setConstant(-std::numeric_limits<float>::infinity());
    for (size_t i = 0; i < scored.size(); ++i) logits(q, scored[i]) = row[i];
  }
  return logits;
}

HeldoutMetrics heldout_metrics(const RowMatrix& scores, const std::vector<std::vector<int>>& databases) {
  std::vector<std::vector<int>> ranked[2], gold[2];  // [0]: one database, [1]: several
  for (int64_t q = 0; q < scores.rows(); ++q) {
    const auto& dbs = databases[static_cast<size_t>(q)];
    const int kind = dbs.size() == 1 ? 0 : 1;
    ranked[kind].push_back(top_indices(scores.row(q).data(), static_cast<int>(scores.cols()), 5));
    gold[kind].push_back(dbs);
  }
  const RankingMetrics singles = ranking_metrics(ranked[0], gold[0], {1, 5});
  const RankingMetrics composites = ranking_metrics(ranked[1], gold[1], {5});
  HeldoutMetrics m;
  m.singles = singles.questions;
  m.composites = composites.questions;
  m.recall_at_1 = singles.recall_at(1);
  m.recall_at_5 = singles.recall_at(5);
  m.all_in_top5 = composites.all_in_top5;
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
