// The selection memory's feature scorer: a question's candidate pools, every candidate's raw similarities, and
// the fused score that ranks them.
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

namespace {

// The late-interaction terms read the first kSynonymsPerWord synonyms of each question word (WordNet::synonyms, most
// frequent sense first), a synonym's cosine with a column weighed by kSynonymWeight, and what an adjective measures
// (WordNet::attributes: "tallest" -> "height"). Chosen on train_spider.json and its synonym versions; docs/selection.md.
constexpr size_t kSynonymsPerWord = 4;

// Each candidate's word lead (RawSimilarities::word_lead) from every candidate's per-word best column cosines
// (`word_bests`, one vector per candidate in order, empty for a database without columns).
std::vector<float> word_leads(const std::vector<Eigen::VectorXf>& word_bests) {
  std::vector<float> out(word_bests.size(), 0.0f);
  int64_t words = 0;
  for (const auto& bests : word_bests) words = std::max<int64_t>(words, bests.size());
  if (words == 0) return out;
  // Per word, the best and second best cosine over the candidates and which candidate has the best.
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  Eigen::VectorXf first = Eigen::VectorXf::Constant(words, kNone), second = first;
  std::vector<size_t> leader(static_cast<size_t>(words), 0);
  for (size_t c = 0; c < word_bests.size(); ++c) {
    const Eigen::VectorXf& bests = word_bests[c];
    for (int64_t w = 0; w < bests.size(); ++w) {
      if (bests[w] > first[w]) {
        second[w] = first[w];
        first[w] = bests[w];
        leader[static_cast<size_t>(w)] = c;
      } else if (bests[w] > second[w]) {
        second[w] = bests[w];
      }
    }
  }
  for (size_t c = 0; c < word_bests.size(); ++c) {
    const Eigen::VectorXf& bests = word_bests[c];
    if (bests.size() == 0) continue;
    double lead = 0.0;
    for (int64_t w = 0; w < words; ++w) {
      if (leader[static_cast<size_t>(w)] != c || second[w] == kNone) continue;
      lead += bests[w] - second[w];
    }
    out[c] = static_cast<float>(lead / static_cast<double>(words));
  }
  return out;
}

// The mean over the question's words (rows) of each word's best column within one table, for the best table; the
// columns follow table order, table_columns[t] of them per table (empty, or not adding up: one table of all).
float best_table_word_column(const Eigen::Ref<const RowMatrix>& word_scores, const std::vector<int64_t>& table_columns) {
  int64_t total = 0;
  for (int64_t count : table_columns) total += count;
  if (total != word_scores.cols()) return word_scores.rowwise().maxCoeff().mean();
  float best = -2.0f;
  for (int64_t t = 0, first = 0; t < static_cast<int64_t>(table_columns.size()); first += table_columns[t], ++t) {
    if (table_columns[t] == 0) continue;
    best = std::max(best, word_scores.middleCols(first, table_columns[t]).rowwise().maxCoeff().mean());
  }
  return best;
}

}  // namespace

std::vector<SelectionMemory::Pool> SelectionMemory::pools(const float* questions, int64_t n) const {
  std::vector<Pool> out(static_cast<size_t>(n));
  if (static_cast<int64_t>(entries_.size()) <= options_.pool) {
    Pool all;
    for (const auto& [_, entry] : entries_) all.push_back(&entry);
    std::fill(out.begin(), out.end(), all);
    return out;
  }
  if (device_cards_) {
    const SearchResult found = device_cards_->search(questions, n, options_.pool);
    for (int64_t q = 0; q < n; ++q)
      for (int64_t r = 0; r < found.ids.cols(); ++r)
        if (found.ids(q, r) >= 0) out[static_cast<size_t>(q)].push_back(entry_of_card_.at(found.ids(q, r)));
    return out;
  }
  for (int64_t q = 0; q < n; ++q) {
    // The int8 pass rounds the question to int16 by its largest value: its norm does not matter.
    for (int64_t id : card_codes_.top(questions + q * encoder_->dim(), options_.pool))
      out[static_cast<size_t>(q)].push_back(entry_of_card_.at(id));
  }
  return out;
}

std::vector<SelectionMemory::Candidate> SelectionMemory::candidates(
    const float* question, const float* lexical_question, const std::unordered_map<int64_t, float>* value_evidence,
    const QuestionWords* words, const Pool* pool) const {
  Pool found;
  if (!pool) {
    found = std::move(pools(question, 1)[0]);
    pool = &found;
  }
  const Pool& entries = *pool;
  // Exact cosines of every card and table of the pool.
  std::vector<int64_t> card_ids, table_ids;
  std::vector<size_t> first_table_of;  // entries[i]'s tables are table_ids[first_table_of[i] ..]
  for (const Entry* entry : entries) {
    card_ids.push_back(entry->id);
    first_table_of.push_back(table_ids.size());
    append_ids(entry->first_table, static_cast<int64_t>(entry->tables.size()), table_ids);
  }
  std::vector<float> card_scores(card_ids.size()), table_scores(table_ids.size());
  parallel_for(2, 2, [&](int64_t which) {
    if (which == 0) {
      cards_.inner_products(question, card_ids.data(), static_cast<int64_t>(card_ids.size()), card_scores.data());
    } else {
      tables_.inner_products(question, table_ids.data(), static_cast<int64_t>(table_ids.size()), table_scores.data());
    }
  });

  // Narrowed to the top `candidates` cards and the databases of the top 4 x `candidates` tables.
  std::vector<char> chosen(entries.size(), 1);
  if (static_cast<int64_t>(entries.size()) > options_.candidates) {
    std::fill(chosen.begin(), chosen.end(), 0);
    std::vector<Scored> cards, tables;
    for (size_t i = 0; i < entries.size(); ++i) {
      cards.push_back({card_scores[i], static_cast<int64_t>(i)});
      for (size_t t = first_table_of[i]; t < first_table_of[i] + entries[i]->tables.size(); ++t)
        tables.push_back({table_scores[t], static_cast<int64_t>(i)});
    }
    keep_top_k(cards, static_cast<size_t>(options_.candidates));
    keep_top_k(tables, 4 * static_cast<size_t>(options_.candidates));
    for (const auto& c : cards) chosen[static_cast<size_t>(c.id)] = 1;
    for (const auto& t : tables) chosen[static_cast<size_t>(t.id)] = 1;
  }

  const auto hubness_of_card = hubness();
  // The lexical cosine is cos(q ∘ idf, row ∘ idf) = (q ∘ idf²) . row / (|q ∘ idf| |row ∘ idf|).
  // A lexical coverage sums the question's share of (q ∘ idf)² over the dimensions a card has.
  std::shared_ptr<const LexicalWeights> weights;
  std::vector<float> weighted_question, question_mass;
  if (lexical_) {
    weights = lexical_weights();
    const int ld = lexical_->dim();
    weighted_question.resize(static_cast<size_t>(ld));
    question_mass.resize(static_cast<size_t>(ld));
    double norm = 0.0;
    for (int j = 0; j < ld; ++j) {
      const double w = static_cast<double>(lexical_question[j]) * weights->idf[static_cast<size_t>(j)];
      norm += w * w;
      weighted_question[static_cast<size_t>(j)] = static_cast<float>(w) * weights->idf[static_cast<size_t>(j)];
      question_mass[static_cast<size_t>(j)] = static_cast<float>(w * w);
    }
    if (norm > 0.0) {
      for (float& v : weighted_question) v = static_cast<float>(v / std::sqrt(norm));
      for (float& v : question_mass) v = static_cast<float>(v / norm);
    }
  }
  std::vector<SparseVectors::RowPass> lexical_passes;  // every card's and table's, by slot (LexicalWeights)
  if (weights && weights->postings)
    lexical_passes = weights->postings->passes(weighted_question.data(), question_mass.data());
  // Exact cosines of the chosen databases' question forms and columns.
  std::vector<int64_t> column_ids, form_ids;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!chosen[i]) continue;
    append_ids(entries[i]->first_column, entries[i]->columns, column_ids);
    append_ids(entries[i]->first_form, entries[i]->forms, form_ids);
  }
  std::vector<float> form_scores(form_ids.size());
  forms_.inner_products(question, form_ids.data(), static_cast<int64_t>(form_ids.size()), form_scores.data());
  // The columns' cosines with the question, each of its words and their synonyms, in one read of the columns: row 0
  // holds the question's, row 1 + w word w's, the rows after the words those of the synonyms.
  const int64_t word_count = words ? words->vectors.rows() : 0;
  const int64_t synonym_count = words ? words->synonyms.rows() : 0;
  const auto column_count = static_cast<int64_t>(column_ids.size());
  const int d = encoder_->dim();
  RowMatrix queries(1 + word_count + synonym_count, d);
  queries.row(0) = Eigen::Map<const Eigen::RowVectorXf>(question, d);
  if (word_count > 0) queries.middleRows(1, word_count) = words->vectors;
  if (synonym_count > 0) queries.bottomRows(synonym_count) = words->synonyms;
  RowMatrix scores(queries.rows(), column_count);
  columns_.inner_products(queries.data(), queries.rows(), column_ids.data(), column_count, scores.data());
  const float* column_scores = scores.data();
  auto word_scores = scores.bottomRows(word_count + synonym_count);
  // Each word takes, column by column, the best of itself and its synonyms (at kSynonymWeight): a word the asker
  // put for a schema word ("vocalist" for singer) meets its column through them.
  for (int64_t s = 0; s < synonym_count; ++s) {
    const int64_t w = words->synonym_of[static_cast<size_t>(s)];
    word_scores.row(w) = word_scores.row(w).cwiseMax(kSynonymWeight * word_scores.row(word_count + s));
  }

  // The chosen databases, each with the offsets of its columns in column_ids and of its forms in form_ids.
  std::vector<size_t> picked, column_offset, form_offset;
  for (size_t i = 0, offset = 0, forms = 0; i < entries.size(); ++i) {
    if (!chosen[i]) continue;
    picked.push_back(i);
    column_offset.push_back(offset);
    form_offset.push_back(forms);
    offset += static_cast<size_t>(entries[i]->columns);
    forms += static_cast<size_t>(entries[i]->forms);
  }
  std::vector<Candidate> out(picked.size());
  // Per candidate, each word's best column cosine (empty for a database without columns), for the word lead.
  std::vector<Eigen::VectorXf> word_bests(picked.size());
  // Each candidate reads only its own rows (up to 500 databases' lexical rows at 100,000 databases): in parallel.
  parallel_for(static_cast<int64_t>(picked.size()), 64, [&](int64_t c) {
    const size_t i = picked[static_cast<size_t>(c)];
    const size_t first_column = column_offset[static_cast<size_t>(c)];
    const Entry& entry = *entries[i];
    const auto count = static_cast<int64_t>(entry.tables.size());
    Candidate& candidate = out[static_cast<size_t>(c)];
    candidate.entry = &entry;
    RawSimilarities& raw = candidate.raw;
    set_whole_question_terms(raw, card_scores[i], table_scores.data() + first_table_of[i], count,
                             column_scores + first_column, entry.columns,
                             form_scores.data() + form_offset[static_cast<size_t>(c)], entry.forms);
    if (entry.columns > 0 && word_count > 0) {
      const auto own = word_scores.topRows(word_count).middleCols(static_cast<int64_t>(first_column), entry.columns);
      Eigen::VectorXf& bests = word_bests[static_cast<size_t>(c)];
      bests = own.rowwise().maxCoeff();
      raw.word_column = bests.mean();
      raw.table_word_column = best_table_word_column(own, entry.table_columns);
    }
    auto hub = hubness_of_card->find(entry.id);
    if (hub != hubness_of_card->end()) raw.hubness = hub->second;
    if (value_evidence) {
      auto found = value_evidence->find(entry.id);
      if (found != value_evidence->end()) raw.value = found->second;
    }
    if (lexical_) {
      // Above the pool, a row's weighted norm is computed in the pass that reads it for the dot product: kept for
      // every row, the norms would cost a pass over all of them whenever the collection changes (and after every
      // load).
      auto ratio = [](float dot, float norm) { return norm > 0.0f ? dot / norm : 0.0f; };
      const float* question = weighted_question.data();
      const SparseVectors::RowPass* passes = nullptr;  // the card's, then its tables'
      std::vector<SparseVectors::RowPass> read;
      if (!lexical_passes.empty()) {
        passes = lexical_passes.data() + weights->first_slot.at(entry.id);
      } else {
        read.resize(static_cast<size_t>(count) + 1);
        read[0] = lexical_cards_.pass(entry.id, question, weights->idf.data(),
                                      count == 0 ? question_mass.data() : nullptr);
        lexical_tables_.passes(entry.first_table, count, question, weights->idf.data(), question_mass.data(),
                               read.data() + 1);  // read in one pass
        passes = read.data();
      }
      const SparseVectors::RowPass& card = passes[0];
      raw.lexical_card = ratio(card.dot, card.weighted_norm);
      raw.lexical_table = count == 0 ? raw.lexical_card : -2.0f;
      raw.lexical_table_coverage = count == 0 ? card.covered : 0.0f;
      for (int64_t t = 1; t <= count; ++t) {
        const SparseVectors::RowPass& table = passes[t];
        raw.lexical_table = std::max(raw.lexical_table, ratio(table.dot, table.weighted_norm));
        raw.lexical_table_coverage = std::max(raw.lexical_table_coverage, table.covered);
      }
    }
  });
  const std::vector<float> leads = word_leads(word_bests);
  for (size_t c = 0; c < out.size(); ++c) out[c].raw.word_lead = leads[c];
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::score(const float* question_in, const float* lexical_question, int k,
                                                  const float* tuned_question,
                                                  const std::unordered_map<int64_t, float>* value_evidence,
                                                  const QuestionWords* words, const Pool* pool) const {
  if (k < 1) throw Error("k must be >= 1");
  if (lexical_ && !lexical_question) {
    throw Error("this selection memory has the lexical encoder '" + lexical_->name() +
                "': give the question's lexical vector too");
  }
  const int d = encoder_->dim();
  const Eigen::RowVectorXf question = unit_row(question_in, d);
  const std::vector<Candidate> candidates_found =
      candidates(question.data(), lexical_question, value_evidence, words, pool);
  const QuestionSimilarities found = similarities_of(candidates_found, model_ != nullptr);
  const size_t count = found.databases.size();
  std::vector<DatabaseMatch> matches(count);
  if (model_) {
    if (model_->fine_tunes_encoder() && !tuned_question) {
      throw Error("the relevance model fine-tunes the encoder: select by question text, not by vector");
    }
    const RowMatrix question_hat = tuned_question
                                       ? model_->project_questions(Eigen::Map<const RowMatrix>(tuned_question, 1, d))
                                       : model_->project_questions(question);
    std::vector<DatabaseView> views(count);
    for (size_t i = 0; i < count; ++i) {
      const RowMatrix& projected = candidates_found[i].entry->projected;
      views[i].card_hat = projected.row(0).data();
      views[i].tables_hat = projected.row(1).data();
      views[i].tables = static_cast<int>(projected.rows() - 1);
      views[i].raw = found.raw[i];
      views[i].best = found.best;
      views[i].standing = found.standings[i];
    }
    const std::vector<float> logits = model_->logits(question_hat.data(), views);
    for (size_t i = 0; i < count; ++i) matches[i].score = logits[i];
  } else {
    for (size_t i = 0; i < count; ++i)
      matches[i].score = untrained_score(options_.fusion, found.raw[i], lexical_ != nullptr);
  }
  const std::vector<float> leads = leads_over_others(matches);
  const PlattScaling platt = calibration_.platt();
  float best = -std::numeric_limits<float>::infinity();
  for (const auto& match : matches) best = std::max(best, match.score);
  for (size_t i = 0; i < count; ++i) {
    matches[i].database = found.databases[i];
    matches[i].probability = platt.probability(matches[i].score, leads[i], best);
  }
  std::sort(matches.begin(), matches.end(), ranks_before);
  if (static_cast<int64_t>(matches.size()) > k) matches.resize(static_cast<size_t>(k));
  return matches;
}

QuestionSimilarities SelectionMemory::similarities_of(const std::vector<Candidate>& candidates,
                                                      bool standings) const {
  QuestionSimilarities s;
  for (const auto& candidate : candidates) {
    s.databases.push_back(*name_of_card_.at(candidate.entry->id));
    s.raw.push_back(candidate.raw);
  }
  s.best = s.raw.empty() ? RawSimilarities{} : s.raw[0];
  for (const auto& raw : s.raw) s.best.keep_max(raw);
  if (standings) s.standings = pool_standings(s.raw, lexical_ != nullptr);
  return s;
}

std::vector<QuestionSimilarities> SelectionMemory::similarities(const std::vector<std::string>& questions,
                                                               const RowMatrix* vectors) const {
  std::vector<QuestionSimilarities> out;
  if (questions.empty()) return out;
  const EncodedQuestions encoded = encode_questions(questions, vectors);
  for (size_t i = 0; i < questions.size(); ++i) {
    const auto row = static_cast<int64_t>(i);
    const Eigen::RowVectorXf question = unit_row(encoded.vectors.row(row).data(), encoder_->dim());
    out.push_back(similarities_of(candidates(question.data(), lexical_ ? encoded.lexical.row(row).data() : nullptr,
                                             &encoded.value_evidence[i], &encoded.words[i]),
                                  /*standings=*/true));
  }
  return out;
}

SelectionMemory::EncodedQuestions SelectionMemory::encode_questions(const std::vector<std::string>& questions,
                                                                    const RowMatrix* vectors) const {
  EncodedQuestions encoded;
  encoded.words = encode_words(questions, vectors ? nullptr : &encoded.vectors);
  if (vectors) encoded.vectors = *vectors;
  if (encoded.vectors.cols() != encoder_->dim() || encoded.vectors.rows() != static_cast<int64_t>(questions.size())) {
    throw Error("encoder '" + encoder_->name() + "' returned a matrix of the wrong shape");
  }
  if (lexical_) encoded.lexical = lexical_->encode(questions);
  const auto collection = static_cast<int64_t>(entries_.size());
  for (const auto& question : questions)
    encoded.value_evidence.push_back(values_.question_evidence(question, collection));
  if (model_ && model_->fine_tunes_encoder()) {
    encoded.tuned = dynamic_cast<const UseLiteEncoder&>(*encoder_).encode_with_top(questions, model_->encoder_top());
  }
  return encoded;
}

std::vector<SelectionMemory::QuestionWords> SelectionMemory::encode_words(const std::vector<std::string>& questions,
                                                                          RowMatrix* question_vectors) const {
  const int d = encoder_->dim();
  const WordNet* wordnet = options_.synonyms ? WordNet::shared() : nullptr;
  std::vector<std::vector<std::string>> words_of;
  std::vector<std::vector<std::pair<std::string, int64_t>>> synonyms_of;  // (synonym, its word's row)
  for (const auto& question : questions) {
    words_of.push_back(question_phrases(question, 1));
    synonyms_of.emplace_back();
    if (!wordnet) continue;
    for (size_t w = 0; w < words_of.back().size(); ++w) {
      const std::vector<std::string> synonyms = wordnet->synonyms(words_of.back()[w]);
      for (size_t s = 0; s < synonyms.size() && s < kSynonymsPerWord; ++s)
        synonyms_of.back().emplace_back(synonyms[s], static_cast<int64_t>(w));
      for (const std::string& attribute : wordnet->attributes(words_of.back()[w]))
        synonyms_of.back().emplace_back(attribute, static_cast<int64_t>(w));
    }
  }
  // The words already cached are copied out, so that the cache is not held while the encoder runs (other questions
  // may be ranked meanwhile).
  std::unordered_map<std::string, Eigen::RowVectorXf> found;
  std::vector<std::string> missing;
  {
    std::lock_guard<std::mutex> lock(word_cache_->mutex);
    const auto& cache = word_cache_->vectors;
    auto want = [&](const std::string& word) {
      if (found.count(word)) return;
      auto hit = cache.find(word);
      if (hit == cache.end()) missing.push_back(word);
      found.emplace(word, hit == cache.end() ? Eigen::RowVectorXf() : hit->second);
    };
    for (size_t q = 0; q < questions.size(); ++q) {
      for (const auto& word : words_of[q]) want(word);
      for (const auto& [synonym, _] : synonyms_of[q]) want(synonym);
    }
  }
  // The questions and their new words in one encoder call: each call costs about a millisecond before its first
  // token (USE-lite reads all its weights), more than a question's new words add to it.
  std::vector<std::string> texts;
  if (question_vectors) texts = questions;
  texts.insert(texts.end(), missing.begin(), missing.end());
  if (!texts.empty()) {
    const RowMatrix rows = encoder_->encode(texts);
    if (rows.rows() != static_cast<int64_t>(texts.size()) || rows.cols() != d) {
      throw Error("encoder '" + encoder_->name() + "' returned a matrix of the wrong shape");
    }
    const int64_t first_word = question_vectors ? static_cast<int64_t>(questions.size()) : 0;
    if (question_vectors) *question_vectors = rows.topRows(first_word);
    for (size_t w = 0; w < missing.size(); ++w)
      found[missing[w]] = unit_row(rows.row(first_word + static_cast<int64_t>(w)).data(), d);
    std::lock_guard<std::mutex> lock(word_cache_->mutex);
    auto& cache = word_cache_->vectors;
    if (cache.size() + missing.size() > kCachedWords) cache.clear();
    for (const auto& word : missing) cache.emplace(word, found.at(word));
  }
  std::vector<QuestionWords> out(questions.size());
  for (size_t q = 0; q < questions.size(); ++q) {
    QuestionWords& words = out[q];
    words.vectors.resize(static_cast<int64_t>(words_of[q].size()), d);
    for (size_t w = 0; w < words_of[q].size(); ++w) words.vectors.row(static_cast<int64_t>(w)) = found.at(words_of[q][w]);
    words.synonyms.resize(static_cast<int64_t>(synonyms_of[q].size()), d);
    for (size_t s = 0; s < synonyms_of[q].size(); ++s) {
      words.synonyms.row(static_cast<int64_t>(s)) = found.at(synonyms_of[q][s].first);
      words.synonym_of.push_back(synonyms_of[q][s].second);
    }
  }
  return out;
}

}  // namespace relmem
