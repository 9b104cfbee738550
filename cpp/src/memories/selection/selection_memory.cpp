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
#include "relmem/encoders/fit_for_encoder.hpp"
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

// Until calibrate() runs, an untrained memory's probabilities are those of its encoder's memory of the 157 Spider
// databases calibrated on train_spider.json questions and on CommonsenseQA questions no evaluation reads
// (scripts/selection_probabilities.py --objective likelihood --lead --fit-no-database --encoder NAME); a fine-tuned
// "minilm:DIR" takes MiniLM's, an encoder without a fit of its own USE-lite's.
struct UntrainedCalibration {
  const char* encoder;
  float scale, lead, bias;
};
constexpr UntrainedCalibration kUntrained[] = {{"use-lite", 8.03f, 15.0f, -9.68f}, {"minilm", 6.95f, 12.65f, -8.0f}};

// Databases are encoded together until their texts reach this many rows: few encoder calls, bounded memory, and
// progress every few databases.
constexpr size_t kTextsPerEncode = 1024;

SelectionCalibration default_calibration(const RelevanceModel* model, const std::string& encoder_name) {
  SelectionCalibration c;
  if (model) {
    c.threshold = model->threshold();
    return c;
  }
  const UntrainedCalibration& fit = fit_for_encoder(kUntrained, encoder_name);
  c.scale = fit.scale;
  c.lead = fit.lead;
  c.bias = fit.bias;
  return c;
}

std::shared_ptr<const Encoder> lexical_encoder_of(const SelectionOptions& options) {
  if (options.lexical_encoder.empty()) return nullptr;
  return std::shared_ptr<const Encoder>(load_encoder(options.lexical_encoder));
}

int dim_of(const std::shared_ptr<const Encoder>& encoder) {
  if (!encoder) throw Error("selection memory needs an encoder");
  return encoder->dim();
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

SelectionCalibration SelectionMemory::untrained_calibration(const std::string& encoder_name) {
  return default_calibration(nullptr, encoder_name);
}

SelectionMemory::SelectionMemory(std::shared_ptr<const Encoder> encoder, const SelectionOptions& options)
    : encoder_(std::move(encoder)),
      lexical_(lexical_encoder_of(options)),
      options_(options),
      calibration_(default_calibration(nullptr, encoder_ ? encoder_->name() : std::string())),
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
  calibration_ = default_calibration(model_.get(), encoder_->name());
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

void SelectionMemory::set_calibration(const SelectionCalibration& calibration) {
  if (!(calibration.threshold >= 0.0f && calibration.threshold <= 1.0f) || !std::isfinite(calibration.scale) ||
      !std::isfinite(calibration.bias) || !std::isfinite(calibration.lead) ||
      !std::isfinite(calibration.gate_scale) || !std::isfinite(calibration.gate_bias)) {
    throw Error("selection calibration needs finite scale/bias/lead/gate and a threshold in [0, 1]");
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
