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

namespace relmem {
namespace {

// The whole-question terms of a database from the question's cosines with its card and with each of its tables,
// columns and question forms (contiguous): each one's best, and where the database has none, the coarser term
// standing in (the card for tables, the best table for columns, the best column for forms).
void set_whole_question_terms(RawSimilarities& raw, float card, const float* tables, int64_t table_count,
                              const float* columns, int64_t column_count, const float* forms, int64_t form_count) {
  auto best = [](float stand_in, const float* scores, int64_t n) {
    return n == 0 ? stand_in : *std::max_element(scores, scores + n);
  };
  raw.card = card;
  raw.table = best(raw.card, tables, table_count);
  raw.column = best(raw.table, columns, column_count);
  raw.question_form = best(raw.column, forms, form_count);
}

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

// Until calibrate() runs, an untrained memory maps a score of 1.27 to probability 0.5: a fused cosine of 0.5 plus
// the late-interaction, coverage and question-form terms of a typical match (set from train_spider.json's medians).
constexpr float kUntrainedScale = 10.0f;
constexpr float kUntrainedBias = -12.7f;

// Databases are encoded together until their texts reach this many rows: few encoder calls, bounded memory, and
// progress every few databases.
constexpr size_t kTextsPerEncode = 1024;

// The late-interaction terms read the first kSynonymsPerWord synonyms of each question word (WordNet::synonyms, most
// frequent sense first), a synonym's cosine with a column weighed by kSynonymWeight, and what an adjective measures
// (WordNet::attributes: "tallest" -> "height"). Chosen on train_spider.json and its synonym versions; docs/selection.md.
constexpr size_t kSynonymsPerWord = 4;

SelectionCalibration default_calibration(const RelevanceModel* model) {
  SelectionCalibration c;
  if (model) {
    c.threshold = model->threshold();
  } else {
    c.scale = kUntrainedScale;
    c.bias = kUntrainedBias;
  }
  return c;
}

std::shared_ptr<const Encoder> lexical_encoder_of(const SelectionOptions& options) {
  if (options.lexical_encoder.empty()) return nullptr;
  return std::shared_ptr<const Encoder>(load_encoder(options.lexical_encoder));
}

bool ranks_before(const DatabaseMatch& a, const DatabaseMatch& b) {
  return a.score > b.score || (a.score == b.score && a.database < b.database);
}

// Appends the ids first, first + 1, ..., first + count - 1 (a database's tables or columns).
void append_ids(int64_t first, int64_t count, std::vector<int64_t>& out) {
  for (int64_t i = 0; i < count; ++i) out.push_back(first + i);
}

Eigen::RowVectorXf unit_row(const float* row, int dim) {
  Eigen::RowVectorXf out = Eigen::Map<const Eigen::RowVectorXf>(row, dim);
  const float norm = out.norm();
  if (norm > 0.0f) out /= norm;
  return out;
}

int dim_of(const std::shared_ptr<const Encoder>& encoder) {
  if (!encoder) throw Error("selection memory needs an encoder");
  return encoder->dim();
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

// An empty fp16 card index on a CUDA device (SelectionOptions::device), null for "cpu".
std::unique_ptr<VectorIndex> device_cards_on(const std::string& device, int dim) {
  if (device == "cpu") return nullptr;
  try {
    return std::make_unique<VectorIndex>(dim, Metric::Cosine, device, "fp16");
  } catch (const Error& error) {
    throw Error("selection memory on device '" + device + "': " + error.what());
  }
}

}  // namespace

SelectionMemory::SelectionMemory(std::shared_ptr<const Encoder> encoder, const SelectionOptions& options)
    : encoder_(std::move(encoder)),
      lexical_(lexical_encoder_of(options)),
      options_(options),
      calibration_(default_calibration(nullptr)),
      cards_(dim_of(encoder_), Metric::Cosine),
      tables_(encoder_->dim(), Metric::Cosine, "cpu", options_.table_dtype),
      columns_(encoder_->dim(), Metric::Cosine, "cpu", options_.column_dtype),
      forms_(encoder_->dim(), Metric::Cosine, "cpu", options_.column_dtype),
      card_codes_(encoder_->dim()),
      lexical_cards_(lexical_ ? lexical_->dim() : 1),
      lexical_tables_(lexical_ ? lexical_->dim() : 1) {
  if (options_.candidates < 1 || options_.pool < options_.candidates) {
    throw Error("selection memory: candidates must be >= 1 and pool >= candidates");
  }
  if (options_.samples_per_column < 0 || options_.max_value_chars < 1 || options_.values_per_column < 0) {
    throw Error("selection memory: samples_per_column and values_per_column must be >= 0 and max_value_chars >= 1");
  }
  set_device(options_.device);
}

void SelectionMemory::set_device(const std::string& device) {
  std::unique_ptr<VectorIndex> cards = device_cards_on(device, encoder_->dim());
  std::unique_lock<std::shared_mutex> lock(*lock_);
  if (cards) {
    constexpr size_t kUploadRows = 65536;  // cards per copy to the device
    std::vector<int64_t> ids;
    std::vector<float> rows;
    auto upload = [&] {
      cards->add(rows.data(), static_cast<int64_t>(ids.size()), ids.data());
      ids.clear();
      rows.clear();
    };
    for (const auto& [_, entry] : entries_) {
      const std::vector<float> card = cards_.reconstruct(entry.id);
      ids.push_back(entry.id);
      rows.insert(rows.end(), card.begin(), card.end());
      if (ids.size() == kUploadRows) upload();
    }
    if (!ids.empty()) upload();
  }
  device_cards_ = std::move(cards);
  options_.device = device_cards_ ? device_cards_->device() : "cpu";
}

SelectionMemory SelectionMemory::build(const Catalog& catalog, std::shared_ptr<const Encoder> encoder,
                                       std::shared_ptr<const RelevanceModel> model,
                                       const std::map<std::string, std::string>& descriptions,
                                       const std::map<std::string, std::vector<std::string>>& examples,
                                       const SelectionOptions& options, const BuildProgress& progress) {
  for (const auto& [db, _] : descriptions)
    if (!catalog.contains(db)) throw Error("description given for unknown database '" + db + "'");
  for (const auto& [db, _] : examples)
    if (!catalog.contains(db)) throw Error("example questions given for unknown database '" + db + "'");
  SelectionMemory memory(std::move(encoder), options);
  memory.set_model(std::move(model));
  memory.add_all(catalog, catalog.databases(), descriptions, examples, progress);
  return memory;
}

RefreshReport SelectionMemory::refresh(const Catalog& catalog, const BuildProgress& progress) {
  std::map<std::string, DatabaseFile> held;
  std::map<std::string, std::string> descriptions;
  std::map<std::string, std::vector<std::string>> examples;
  {
    std::shared_lock<std::shared_mutex> lock(*lock_);
    for (const auto& [name, entry] : entries_) {
      held[name] = entry.file;
      if (!entry.description.empty()) descriptions[name] = entry.description;
      if (!entry.examples.empty()) examples[name] = entry.examples;
    }
  }
  RefreshReport report;
  const std::vector<std::string> rebuild = plan_refresh(catalog, held, report);
  for (const auto& name : report.removed) remove(name);
  add_all(catalog, rebuild, descriptions, examples, progress);
  return report;
}

void SelectionMemory::add(const Catalog& catalog, const std::string& db, const std::string& description,
                          const std::vector<std::string>& examples) {
  std::map<std::string, std::string> descriptions;
  std::map<std::string, std::vector<std::string>> example_map;
  if (!description.empty()) descriptions[db] = description;
  if (!examples.empty()) example_map[db] = examples;
  add_all(catalog, {db}, descriptions, example_map);
}

void SelectionMemory::add_all(const Catalog& catalog, const std::vector<std::string>& dbs,
                              const std::map<std::string, std::string>& descriptions,
                              const std::map<std::string, std::vector<std::string>>& examples,
                              const BuildProgress& progress) {
  std::vector<std::string> chunk;
  std::vector<DatabaseTexts> texts;
  size_t rows = 0;
  for (size_t i = 0; i < dbs.size(); ++i) {
    CardOptions card;
    card.samples_per_column = options_.samples_per_column;
    card.max_value_chars = options_.max_value_chars;
    auto d = descriptions.find(dbs[i]);
    if (d != descriptions.end()) card.description = d->second;
    auto e = examples.find(dbs[i]);
    chunk.push_back(dbs[i]);
    texts.push_back(database_texts(catalog, dbs[i], card,
                                   e == examples.end() ? std::vector<std::string>{} : e->second,
                                   options_.values_per_column, options_.synonyms ? WordNet::shared() : nullptr));
    const DatabaseTexts& added = texts.back();
    rows += 1 + added.table_cards.size() + added.column_cards.size() + added.question_forms.size();
    if (rows < kTextsPerEncode && i + 1 < dbs.size()) continue;
    {
      std::unique_lock<std::shared_mutex> lock(*lock_);  // not around progress: it may wait for Python
      insert_texts(chunk, texts, catalog, descriptions, examples);
    }
    if (progress)
      for (size_t done = i + 2 - chunk.size(); done <= i + 1; ++done) progress(dbs[done - 1], done, dbs.size());
    chunk.clear();
    texts.clear();
    rows = 0;
  }
}

void SelectionMemory::insert_texts(const std::vector<std::string>& dbs, std::vector<DatabaseTexts>& texts,
                                   const Catalog& catalog, const std::map<std::string, std::string>& descriptions,
                                   const std::map<std::string, std::vector<std::string>>& examples) {
  std::vector<std::string> all, all_lexical;
  for (const auto& t : texts) {
    all.push_back(t.card);
    all.insert(all.end(), t.table_cards.begin(), t.table_cards.end());
    all.insert(all.end(), t.column_cards.begin(), t.column_cards.end());
    all.insert(all.end(), t.question_forms.begin(), t.question_forms.end());
    all_lexical.push_back(t.lexical_card);
    all_lexical.insert(all_lexical.end(), t.lexical_table_cards.begin(), t.lexical_table_cards.end());
  }
  const RowMatrix rows = encoder_->encode(all);
  const RowMatrix lexical_rows = lexical_ ? lexical_->encode(all_lexical) : RowMatrix();
  int64_t next = 0, next_lexical = 0;
  for (size_t i = 0; i < dbs.size(); ++i) {
    Entry entry;
    entry.tables = texts[i].table_names;
    entry.table_columns = texts[i].table_columns;
    entry.file = database_file(catalog, dbs[i]);
    auto d = descriptions.find(dbs[i]);
    if (d != descriptions.end()) entry.description = d->second;
    auto e = examples.find(dbs[i]);
    if (e != examples.end()) entry.examples = e->second;
    const auto count = static_cast<int64_t>(entry.tables.size());
    const auto columns = static_cast<int64_t>(texts[i].column_cards.size());
    const RowMatrix table_rows = rows.middleRows(next + 1, count);
    const RowMatrix column_rows = rows.middleRows(next + 1 + count, columns);
    const auto forms = static_cast<int64_t>(texts[i].question_forms.size());
    const RowMatrix form_rows = rows.middleRows(next + 1 + count + columns, forms);
    RowMatrix lexical_tables;
    if (lexical_) lexical_tables = lexical_rows.middleRows(next_lexical + 1, count);
    remove_entry(dbs[i]);
    insert(dbs[i], std::move(entry), rows.row(next).data(), table_rows,
           lexical_ ? lexical_rows.row(next_lexical).data() : nullptr, lexical_ ? &lexical_tables : nullptr,
           column_rows, std::move(texts[i].values), form_rows);
    next += 1 + count + columns + forms;
    next_lexical += 1 + count;
  }
}

void SelectionMemory::add_vectors(const std::string& db, const float* card, const std::vector<std::string>& table_names,
                                  const RowMatrix& table_vectors, const float* lexical_card,
                                  const RowMatrix* lexical_tables, const RowMatrix* column_vectors,
                                  std::vector<std::string> values, std::vector<int64_t> table_columns,
                                  const RowMatrix* form_vectors) {
  if (db.empty()) throw Error("database name must not be empty");
  if (!card) throw Error("add_vectors: missing card vector");
  std::unique_lock<std::shared_mutex> lock(*lock_);
  const auto count = static_cast<int64_t>(table_names.size());
  if (table_vectors.rows() != count || (count > 0 && table_vectors.cols() != encoder_->dim())) {
    throw Error("add_vectors: need one " + std::to_string(encoder_->dim()) + "-d row per table name");
  }
  if (lexical_) {
    if (!lexical_card || !lexical_tables || lexical_tables->rows() != count ||
        (count > 0 && lexical_tables->cols() != lexical_->dim())) {
      throw Error("add_vectors: this memory has the lexical encoder '" + lexical_->name() + "': give its " +
                  std::to_string(lexical_->dim()) + "-d card row and one row per table too");
    }
  }
  if (column_vectors && column_vectors->rows() > 0 && column_vectors->cols() != encoder_->dim()) {
    throw Error("add_vectors: column rows must be " + std::to_string(encoder_->dim()) + "-d");
  }
  if (form_vectors && form_vectors->rows() > 0 && form_vectors->cols() != encoder_->dim()) {
    throw Error("add_vectors: question form rows must be " + std::to_string(encoder_->dim()) + "-d");
  }
  const int64_t given_columns = column_vectors ? column_vectors->rows() : 0;
  if (!table_columns_fit(table_columns, table_names.size(), given_columns)) {
    throw Error("add_vectors: table_columns needs one count >= 0 per table name, adding up to the " +
                std::to_string(given_columns) + " column rows");
  }
  Entry entry;
  entry.tables = table_names;
  entry.table_columns = std::move(table_columns);
  remove_entry(db);
  insert(db, std::move(entry), card, table_vectors, lexical_ ? lexical_card : nullptr,
         lexical_ ? lexical_tables : nullptr, column_vectors ? *column_vectors : RowMatrix(), std::move(values),
         form_vectors ? *form_vectors : RowMatrix());
}

void SelectionMemory::insert(const std::string& db, Entry entry, const float* card, const RowMatrix& table_vectors,
                             const float* lexical_card, const RowMatrix* lexical_tables,
                             const RowMatrix& column_vectors, std::vector<std::string> values,
                             const RowMatrix& form_vectors) {
  entry.id = next_card_id_;
  entry.first_table = next_table_id_;
  entry.first_column = next_column_id_;
  entry.columns = column_vectors.rows();
  std::vector<int64_t> column_ids;
  append_ids(entry.first_column, entry.columns, column_ids);
  if (entry.columns > 0) columns_.add(column_vectors.data(), entry.columns, column_ids.data());
  if (!values.empty()) values_.add(entry.id, std::move(values));
  next_column_id_ += entry.columns;
  entry.first_form = next_form_id_;
  entry.forms = form_vectors.rows();
  std::vector<int64_t> form_ids;
  append_ids(entry.first_form, entry.forms, form_ids);
  if (entry.forms > 0) forms_.add(form_vectors.data(), entry.forms, form_ids.data());
  next_form_id_ += entry.forms;
  const auto count = static_cast<int64_t>(entry.tables.size());
  std::vector<int64_t> table_ids;
  append_ids(entry.first_table, count, table_ids);
  cards_.add(card, 1, &entry.id);
  const std::vector<float> normalized = cards_.reconstruct(entry.id);
  card_codes_.add(entry.id, normalized.data());
  if (device_cards_) device_cards_->add(normalized.data(), 1, &entry.id);
  if (count > 0) tables_.add(table_vectors.data(), count, table_ids.data());
  if (lexical_) {
    lexical_cards_.add(entry.id, lexical_card);
    for (int64_t i = 0; i < count; ++i) lexical_tables_.add(table_ids[static_cast<size_t>(i)], lexical_tables->row(i).data());
  }
  ++next_card_id_;
  next_table_id_ += count;
  collection_changed();
  auto [it, _] = entries_.emplace(db, std::move(entry));
  name_of_card_[it->second.id] = &it->first;
  entry_of_card_[it->second.id] = &it->second;
  for (int64_t id : table_ids) name_of_table_[id] = &it->first;
  if (model_) project(it->second);
}

bool SelectionMemory::remove(const std::string& db) {
  std::unique_lock<std::shared_mutex> lock(*lock_);
  return remove_entry(db);
}

bool SelectionMemory::remove_entry(const std::string& db) {
  auto it = entries_.find(db);
  if (it == entries_.end()) return false;
  const Entry& entry = it->second;
  std::vector<int64_t> table_ids;
  append_ids(entry.first_table, static_cast<int64_t>(entry.tables.size()), table_ids);
  cards_.remove({entry.id});
  card_codes_.remove(entry.id);
  if (device_cards_) device_cards_->remove({entry.id});
  tables_.remove(table_ids);
  std::vector<int64_t> column_ids;
  append_ids(entry.first_column, entry.columns, column_ids);
  columns_.remove(column_ids);
  std::vector<int64_t> form_ids;
  append_ids(entry.first_form, entry.forms, form_ids);
  forms_.remove(form_ids);
  values_.remove(entry.id);
  lexical_cards_.remove(entry.id);
  for (int64_t id : table_ids) lexical_tables_.remove(id);
  name_of_card_.erase(entry.id);
  entry_of_card_.erase(entry.id);
  for (int64_t id : table_ids) name_of_table_.erase(id);
  entries_.erase(it);
  collection_changed();
  return true;
}

void SelectionMemory::collection_changed() {
  {
    std::lock_guard<std::mutex> lock(lexical_cache_->mutex);
    lexical_cache_->weights.reset();
  }
  std::lock_guard<std::mutex> lock(hubness_cache_->mutex);
  hubness_cache_->of_card.reset();
}

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

void SelectionMemory::check_model(const RelevanceModel& model) const {
  if (model.config().input_dim != encoder_->dim()) {
    throw Error("relevance model expects " + std::to_string(model.config().input_dim) + "-d vectors but encoder '" +
                encoder_->name() + "' gives " + std::to_string(encoder_->dim()));
  }
  if (!model.config().encoder.empty() && model.config().encoder != encoder_->name()) {
    throw Error("relevance model was trained with encoder '" + model.config().encoder +
                "' but the selection memory uses '" + encoder_->name() + "'");
  }
  const std::string lexical = lexical_ ? lexical_->name() : "";
  if (model.config().lexical_encoder != lexical) {
    throw Error("relevance model was trained with lexical encoder '" + model.config().lexical_encoder +
                "' but the selection memory uses '" + lexical + "' (SelectionOptions::lexical_encoder)");
  }
  if (model.fine_tunes_encoder()) {
    const auto* use_lite = dynamic_cast<const UseLiteEncoder*>(encoder_.get());
    if (!use_lite) throw Error("relevance model fine-tunes USE-lite's top layers; the memory's encoder is not USE-lite");
    use_lite->check_top(model.encoder_top());
  }
}

bool SelectionMemory::table_columns_fit(const std::vector<int64_t>& table_columns, size_t tables, int64_t columns) {
  if (table_columns.empty()) return true;
  int64_t listed = 0;
  for (int64_t count : table_columns) {
    if (count < 0) return false;
    listed += count;
  }
  return table_columns.size() == tables && listed == columns;
}

void SelectionMemory::set_model(std::shared_ptr<const RelevanceModel> model) {
  std::unique_lock<std::shared_mutex> lock(*lock_);
  if (model) check_model(*model);
  model_ = std::move(model);
  calibration_ = default_calibration(model_.get());
  for (auto& [_, entry] : entries_) {
    if (model_) {
      project(entry);
    } else {
      entry.projected = RowMatrix();
    }
  }
}

void SelectionMemory::project(Entry& entry) const {
  const int d = encoder_->dim();
  const auto count = static_cast<int64_t>(entry.tables.size());
  RowMatrix raw(1 + std::max<int64_t>(count, 1), d);
  const std::vector<float> card = cards_.reconstruct(entry.id);
  raw.row(0) = Eigen::Map<const Eigen::RowVectorXf>(card.data(), d);
  if (count == 0) raw.row(1) = raw.row(0);
  for (int64_t i = 0; i < count; ++i) {
    const std::vector<float> table = tables_.reconstruct(entry.first_table + i);
    raw.row(1 + i) = Eigen::Map<const Eigen::RowVectorXf>(table.data(), d);
  }
  entry.projected = model_->project_databases(raw);
}

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
  for (size_t i = 0; i < count; ++i) {
    matches[i].database = found.databases[i];
    matches[i].probability = sigmoid(calibration_.scale * matches[i].score + calibration_.bias);
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

std::vector<DatabaseMatch> SelectionMemory::select(const std::string& question, int k) const {
  return select_batch({question}, k)[0];
}

std::vector<std::vector<DatabaseMatch>> SelectionMemory::select_batch(const std::vector<std::string>& questions,
                                                                      int k) const {
  if (k < 1) throw Error("k must be >= 1");
  std::shared_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::vector<DatabaseMatch>> out;
  for (const auto& parts : rank_parts(questions, k)) out.push_back(merge_parts(parts, k));
  return out;
}

std::vector<SelectionMemory::PartRankings> SelectionMemory::rank_given_parts(
    const std::vector<std::vector<std::string>>& questions, int k) const {
  std::vector<std::string> wholes;
  std::vector<QuestionParts> split;
  for (const auto& parts : questions) {
    QuestionParts given{{}, true};
    for (const auto& part : parts)
      if (part.find_first_not_of(" \t\n\r") != std::string::npos) given.texts.push_back(part);
    if (given.texts.empty()) throw Error("select_parts: a question needs at least one non-empty part");
    wholes.push_back(given.texts.size() == 1 ? given.texts[0] : std::string());  // marked parts: the whole is unread
    split.push_back(std::move(given));
  }
  return rank_split(wholes, split, k);
}

std::vector<std::vector<DatabaseMatch>> SelectionMemory::select_parts_batch(
    const std::vector<std::vector<std::string>>& questions, int k) const {
  if (k < 1) throw Error("k must be >= 1");
  std::shared_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::vector<DatabaseMatch>> out;
  for (const auto& parts : rank_given_parts(questions, k)) out.push_back(merge_parts(parts, k));
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::select_parts(const std::vector<std::string>& parts, int k) const {
  return select_parts_batch({parts}, k)[0];
}

std::vector<SelectionMemory::PartRankings> SelectionMemory::rank_parts(const std::vector<std::string>& questions,
                                                                     int k) const {
  std::vector<QuestionParts> split;
  for (const auto& question : questions) {
    split.push_back(split_question(question));
    if (!options_.split_sentences && !split.back().marked) split.back() = {{question}, false};
  }
  return rank_split(questions, split, k);
}

std::vector<SelectionMemory::PartRankings> SelectionMemory::rank_split(const std::vector<std::string>& questions,
                                                                     const std::vector<QuestionParts>& split,
                                                                     int k) const {
  if (questions.empty()) return {};
  std::vector<std::string> texts;  // per question: its whole text unless its parts are marked, then its parts
  for (size_t i = 0; i < questions.size(); ++i) {
    const QuestionParts& parts = split[i];
    if (parts.texts.size() == 1 || !parts.marked) texts.push_back(questions[i]);
    if (parts.texts.size() > 1) texts.insert(texts.end(), parts.texts.begin(), parts.texts.end());
  }
  // One ranking per text: of its depth, into its place in `out`.
  struct Ranking {
    int depth;
    std::vector<DatabaseMatch>* into;
  };
  std::vector<PartRankings> out(questions.size());
  std::vector<Ranking> rankings;  // rankings[t]: of texts[t]
  for (size_t i = 0; i < questions.size(); ++i) {
    const QuestionParts& parts = split[i];
    out[i].parts.resize(parts.texts.size());
    if (parts.texts.size() == 1) {
      rankings.push_back({k, &out[i].parts[0]});
      continue;
    }
    // Beside its parts, the whole question gives only its best database: its next ones would crowd out the
    // parts' (3-part questions from train_spider.json, all in the top 5: 0.550 with the whole ranking, 0.573 with
    // its best, 0.577 without it; but the parts alone lose a single question cut in two: recall@1 0.613 against
    // 0.732).
    if (!parts.marked) rankings.push_back({1, &out[i].whole});
    for (auto& part : out[i].parts) rankings.push_back({INT_MAX, &part});
  }
  const EncodedQuestions encoded = encode_questions(texts);
  // On a GPU, the pools of all texts come from one search; on the CPU each text finds its own as it is scored.
  const std::vector<Pool> found_pools =
      device_cards_ ? pools(encoded.vectors.data(), encoded.vectors.rows()) : std::vector<Pool>();
  const auto count = static_cast<int64_t>(rankings.size());
  // The texts are scored independently (score() only reads the memory, whose lock the caller holds; the lexical
  // weights and the word cache have their own locks), so in parallel the rankings are those of one at a time.
  parallel_for(count, 2, [&](int64_t t) {
    *rankings[static_cast<size_t>(t)].into =
        score(encoded.vectors.row(t).data(), lexical_ ? encoded.lexical.row(t).data() : nullptr,
              rankings[static_cast<size_t>(t)].depth, encoded.tuned.size() ? encoded.tuned.row(t).data() : nullptr,
              &encoded.value_evidence[static_cast<size_t>(t)], &encoded.words[static_cast<size_t>(t)],
              found_pools.empty() ? nullptr : &found_pools[static_cast<size_t>(t)]);
  });
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::merge_parts(const PartRankings& rankings, int k) {
  if (rankings.whole.empty() && rankings.parts.size() == 1) return rankings.parts[0];
  // Scores are comparable within a part, not across parts: a part about a narrow topic scores lower everywhere.
  // Every ranking's best database therefore scores as the best one, the whole question's first, then the parts'
  // by their own probability.
  float best = -std::numeric_limits<float>::infinity();
  for (const auto& part : rankings.parts)
    if (!part.empty()) best = std::max(best, part[0].score);
  if (!rankings.whole.empty()) best = std::max(best, rankings.whole[0].score);
  struct Merged {
    DatabaseMatch match;
    int tier = 2;  // 0: the whole question's best, 1: a part's best, 2: the rest
    float lead = 0.0f;  // a part's best: its own probability
  };
  std::unordered_map<std::string, Merged> merged;
  auto add = [&](const std::vector<DatabaseMatch>& ranking, bool whole) {
    for (size_t r = 0; r < ranking.size(); ++r) {
      const DatabaseMatch& match = ranking[r];
      const float shifted = match.score + (best - ranking[0].score);
      const int tier = r > 0 ? 2 : (whole ? 0 : 1);
      auto [it, inserted] = merged.emplace(match.database, Merged{{match.database, shifted, match.probability}, tier,
                                                                   r == 0 ? match.probability : 0.0f});
      if (inserted) continue;
      Merged& m = it->second;
      m.match.score = std::max(m.match.score, shifted);
      m.match.probability = std::max(m.match.probability, match.probability);
      m.tier = std::min(m.tier, tier);
      if (r == 0) m.lead = std::max(m.lead, match.probability);
    }
  };
  add(rankings.whole, true);
  for (const auto& part : rankings.parts) add(part, false);
  std::vector<Merged> ordered;
  for (auto& [_, m] : merged) ordered.push_back(std::move(m));
  std::sort(ordered.begin(), ordered.end(), [](const Merged& a, const Merged& b) {
    if (a.match.score != b.match.score) return a.match.score > b.match.score;
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.lead != b.lead) return a.lead > b.lead;
    return a.match.database < b.match.database;
  });
  std::vector<DatabaseMatch> out;
  for (auto& m : ordered) {
    if (static_cast<int64_t>(out.size()) >= k) break;
    out.push_back(std::move(m.match));
  }
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::select_vector(const float* question, int k,
                                                          const float* lexical_question) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  return score(question, lexical_question, k);
}

std::vector<DatabaseMatch> SelectionMemory::select_set(const std::string& question) const {
  return select_set_batch({question})[0];
}

std::vector<std::vector<DatabaseMatch>> SelectionMemory::select_set_batch(
    const std::vector<std::string>& questions) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::vector<DatabaseMatch>> out;
  for (const auto& parts : rank_parts(questions, INT_MAX)) out.push_back(chosen_set(parts));
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::select_set_parts(const std::vector<std::string>& parts) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  return chosen_set(rank_given_parts({parts}, INT_MAX)[0]);
}

std::vector<DatabaseMatch> SelectionMemory::chosen_set(const PartRankings& parts) const {
  // Every part picks its own databases (at least its best one), so a question with several parts gets one per
  // part. The whole question picks only when there are no parts: beside them, its best is one more guess (set F1
  // of 3-part questions from train_spider.json 0.705 with it, 0.723 without).
  std::unordered_set<std::string> chosen;
  for (const auto& part : parts.parts) {
    for (size_t i = 0; i < part.size() && (i == 0 || part[i].probability >= calibration_.threshold); ++i)
      chosen.insert(part[i].database);
  }
  std::vector<DatabaseMatch> matches;
  for (auto& match : merge_parts(parts, INT_MAX))
    if (chosen.count(match.database)) matches.push_back(std::move(match));
  return matches;
}

SetMetrics SelectionMemory::calibrate(const std::vector<LabeledQuestion>& questions, int candidates) {
  if (questions.empty()) throw Error("calibration needs at least one labelled question");
  if (candidates < 1) throw Error("calibration candidates must be >= 1");
  std::unique_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::string> texts;
  for (const auto& q : questions) {
    if (q.databases.empty()) throw Error("calibration question without databases: " + q.text);
    for (const auto& db : q.databases)
      if (!entries_.count(db)) throw Error("calibration question names unknown database '" + db + "'");
    texts.push_back(q.text);
  }
  const std::vector<PartRankings> ranked = rank_parts(texts, candidates);
  std::vector<ScoredQuestion> scored;
  for (size_t i = 0; i < questions.size(); ++i) {
    // A question's candidates count with their best part's own (unshifted) score, the score that sets their
    // probability; as in select_set, the whole question's ranking counts only when it has no parts.
    std::unordered_map<std::string, float> best_score;
    for (const auto& part : ranked[i].parts) {
      for (const auto& match : part) {
        auto [it, inserted] = best_score.emplace(match.database, match.score);
        if (!inserted) it->second = std::max(it->second, match.score);
      }
    }
    // As in select_set, each part's best database is chosen whatever its probability: they lead, the rest follow
    // best first. (Fitted as a prefix of the merged ranking instead, a 3-part question needed a threshold low
    // enough for all three of its databases, and the threshold came out too low for single questions.)
    std::unordered_set<std::string> part_best;
    for (const auto& part : ranked[i].parts)
      if (!part.empty()) part_best.insert(part[0].database);
    std::vector<DatabaseMatch> forced, others;
    for (const auto& [database, value] : best_score)
      (part_best.count(database) ? forced : others).push_back({database, value, 0.0f});
    std::sort(forced.begin(), forced.end(), ranks_before);
    std::sort(others.begin(), others.end(), ranks_before);
    std::vector<DatabaseMatch> candidates_of_question = forced;
    candidates_of_question.insert(candidates_of_question.end(), others.begin(), others.end());
    const auto kept = std::max<int64_t>(candidates, static_cast<int64_t>(forced.size()));
    if (static_cast<int64_t>(candidates_of_question.size()) > kept) candidates_of_question.resize(static_cast<size_t>(kept));
    ScoredQuestion s;
    s.gold = static_cast<int64_t>(questions[i].databases.size());
    s.forced = static_cast<int64_t>(forced.size());
    for (const auto& match : candidates_of_question) {
      s.values.push_back(match.score);
      const auto& gold = questions[i].databases;
      s.relevant.push_back(std::find(gold.begin(), gold.end(), match.database) != gold.end() ? 1 : 0);
    }
    scored.push_back(std::move(s));
  }
  const PlattScaling platt = fit_platt(scored);
  for (auto& s : scored)
    for (auto& v : s.values) v = platt.probability(v);
  SelectionCalibration c;
  c.scale = platt.scale;
  c.bias = platt.bias;
  c.threshold = best_threshold(scored);
  c.fitted = true;
  calibration_ = c;
  return set_metrics(scored, c.threshold);
}

void SelectionMemory::set_calibration(const SelectionCalibration& calibration) {
  if (!(calibration.threshold >= 0.0f && calibration.threshold <= 1.0f) || !std::isfinite(calibration.scale) ||
      !std::isfinite(calibration.bias)) {
    throw Error("selection calibration needs finite scale/bias and a threshold in [0, 1]");
  }
  std::unique_lock<std::shared_mutex> lock(*lock_);
  calibration_ = calibration;
}

bool SelectionMemory::contains(const std::string& db) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  return entries_.count(db) > 0;
}

size_t SelectionMemory::size() const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  return entries_.size();
}

std::vector<std::string> SelectionMemory::databases() const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::string> names;
  for (const auto& [name, _] : entries_) names.push_back(name);
  return names;
}

size_t SelectionMemory::memory_bytes() const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  size_t bytes = cards_.memory_bytes() + tables_.memory_bytes() + columns_.memory_bytes() +
                 forms_.memory_bytes();  // mapped rows excluded
  bytes += card_codes_.memory_bytes() + lexical_cards_.memory_bytes() + lexical_tables_.memory_bytes() +
           values_.memory_bytes();
  {
    std::lock_guard<std::mutex> cache(lexical_cache_->mutex);  // the postings once a question has built them
    if (lexical_cache_->weights && lexical_cache_->weights->postings)
      bytes += lexical_cache_->weights->postings->memory_bytes();
  }
  for (const auto& [name, entry] : entries_) {
    bytes += name.size() + entry.description.size() + static_cast<size_t>(entry.projected.size()) * sizeof(float);
    for (const auto& table : entry.tables) bytes += table.size();
    for (const auto& example : entry.examples) bytes += example.size();
  }
  return bytes;
}

std::vector<std::string> SelectionMemory::tables(const std::string& db) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  auto it = entries_.find(db);
  if (it == entries_.end()) throw Error("unknown database '" + db + "' in the selection memory");
  return it->second.tables;
}

DatabaseVectors SelectionMemory::vectors(const std::string& db) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  auto it = entries_.find(db);
  if (it == entries_.end()) throw Error("unknown database '" + db + "' in the selection memory");
  const Entry& entry = it->second;
  const int d = encoder_->dim();
  const auto count = static_cast<int64_t>(entry.tables.size());
  auto rows_of = [d](const VectorIndex& index, int64_t first, int64_t n) {
    RowMatrix out(n, d);
    for (int64_t i = 0; i < n; ++i) out.row(i) = Eigen::Map<const Eigen::RowVectorXf>(index.reconstruct(first + i).data(), d);
    return out;
  };
  DatabaseVectors out;
  out.card = cards_.reconstruct(entry.id);
  out.table_names = entry.tables;
  out.tables = rows_of(tables_, entry.first_table, count);
  out.columns = rows_of(columns_, entry.first_column, entry.columns);
  out.table_columns = entry.table_columns;
  out.forms = rows_of(forms_, entry.first_form, entry.forms);
  out.values = values_.values(entry.id);
  if (lexical_) {
    out.lexical_card = lexical_cards_.dense(entry.id);
    out.lexical_tables = RowMatrix(count, lexical_->dim());
    for (int64_t i = 0; i < count; ++i) {
      const std::vector<float> row = lexical_tables_.dense(entry.first_table + i);
      out.lexical_tables.row(i) = Eigen::Map<const Eigen::RowVectorXf>(row.data(), lexical_->dim());
    }
  }
  return out;
}

}  // namespace relmem
