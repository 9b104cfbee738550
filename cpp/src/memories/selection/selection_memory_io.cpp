// A saved selection memory is a folder: manifest.json, cards.index, tables.index, columns.index, forms.index,
// values.postings and optionally the lexical vectors and relevance.model. Everything but the manifest is binary and
// checksummed, and the large files are memory-mapped on load. Folders of versions 1 (before columns and values) to 4
// (before question forms) still load: their databases have no question forms, and their best column stands in.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <shared_mutex>

#include <nlohmann/json.hpp>

#include "../../common/atomic_folder.hpp"
#include "database_list_file.hpp"
#include "relmem/memories/selection/selection_memory.hpp"

namespace relmem {
namespace {

constexpr const char* kFormat = "relmem-selection-memory";
// 5: forms.index and the question forms' ids in databases.bin; 4: databases.bin and values.postings replace the
// manifest's database list and values.json, the lexical vectors are mapped (sparse vector files of version 2); 3:
// the manifest holds values.json's checksum.
constexpr int kVersion = 5;
constexpr int kFirstVersion = 1;
constexpr const char* kManifest = "manifest.json";
constexpr const char* kCards = "cards.index";
constexpr const char* kTables = "tables.index";
constexpr const char* kColumns = "columns.index";
constexpr const char* kForms = "forms.index";
constexpr const char* kDatabases = "databases.bin";
constexpr const char* kValues = "values.postings";
constexpr const char* kValuesJson = "values.json";  // versions 2 and 3
constexpr const char* kLexicalCards = "lexical_cards.sparse";
constexpr const char* kLexicalTables = "lexical_tables.sparse";
constexpr const char* kModel = "relevance.model";

std::string join(const std::string& folder, const char* name) {
  return (std::filesystem::path(folder) / name).string();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw Error("cannot write " + path);
  out << text;
  if (!out) throw Error("failed writing " + path);
}

// values.json of versions 2 and 3, checked against the checksum the manifest holds (none before version 3).
nlohmann::json read_values_json(const std::string& path, const std::string& checksum) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open selection memory file " + path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!checksum.empty() && content_checksum(text) != checksum)
    throw Error("selection memory file " + path + " is corrupt (checksum mismatch)");
  auto values = nlohmann::json::parse(text, nullptr, false);
  if (values.is_discarded()) throw Error("selection memory file " + path + " is not valid JSON");
  if (!values.is_object()) throw Error("selection memory file " + path + " is not a JSON object");
  return values;
}

nlohmann::json option_json(SimilarityFusion fusion) { return fusion_name(fusion); }
template <typename T>
nlohmann::json option_json(const T& value) {
  return value;
}

void read_option(const nlohmann::json& saved, SimilarityFusion& fusion) {
  fusion = parse_fusion(saved.get<std::string>());
}
template <typename T>
void read_option(const nlohmann::json& saved, T& value) {
  value = saved.get<T>();
}

nlohmann::json saved_options(const SelectionOptions& options) {
  nlohmann::json out = nlohmann::json::object();
  for_each_selection_option(options, [&](const SelectionOptionName& option, const auto& value) {
    if (option.saved) out[option.name] = option_json(value);
  });
  return out;
}

// What a manifest written before an option existed stands for: the value the memory was built with then. Every
// other option is in every manifest.
nlohmann::json before_option_existed(const std::string& name, int version, const SelectionOptions& read_so_far,
                                     const std::string& manifest_path) {
  if (name == "pool") return std::max(SelectionOptions{}.pool, read_so_far.candidates);
  if (name == "values_per_column" && version < 2) return 0;  // before columns and values
  if (name == "column_dtype" || name == "table_dtype") return "fp32";  // before compact storage
  if (name == "synonyms") return false;
  if (name == "split_sentences") return true;
  throw Error(manifest_path + " is malformed: its options lack '" + name + "'");
}

SelectionOptions read_options(const nlohmann::json& saved, int version, const std::string& manifest_path) {
  SelectionOptions options;
  for_each_selection_option(options, [&](const SelectionOptionName& option, auto& value) {
    if (!option.saved) return;
    if (saved.contains(option.name)) {
      read_option(saved.at(option.name), value);
    } else {
      read_option(before_option_existed(option.name, version, options, manifest_path), value);
    }
  });
  return options;
}

}  // namespace

void SelectionMemory::save(const std::string& target) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  AtomicFolder out(target);
  const std::string& folder = out.path();
  std::vector<SavedDatabase> databases;
  databases.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) {
    databases.push_back({name, entry.id, entry.first_table, entry.tables, entry.first_column, entry.columns,
                         entry.table_columns, entry.first_form, entry.forms, entry.description, entry.examples,
                         entry.file.path, entry.file.stamp.size, entry.file.stamp.mtime_ns});
  }
  const nlohmann::json manifest = {
      {"format", kFormat},
      {"version", kVersion},
      {"encoder", encoder_->name()},
      {"dim", encoder_->dim()},
      {"options", saved_options(options_)},
      {"calibration",
       {{"scale", calibration_.scale},
        {"bias", calibration_.bias},
        {"threshold", calibration_.threshold},
        {"fitted", calibration_.fitted},
        {"lead", calibration_.lead},
        {"gated", calibration_.gated},
        {"gate_scale", calibration_.gate_scale},
        {"gate_bias", calibration_.gate_bias}}},
      {"model", model_ ? nlohmann::json(kModel) : nlohmann::json(nullptr)},
      {"next_card_id", next_card_id_},
      {"next_table_id", next_table_id_},
      {"next_column_id", next_column_id_},
      {"next_form_id", next_form_id_},
      {"databases", databases.size()}};
  save_database_list(databases, join(folder, kDatabases));
  cards_.save(join(folder, kCards));
  tables_.save(join(folder, kTables));
  columns_.save(join(folder, kColumns));
  forms_.save(join(folder, kForms));
  values_.save(join(folder, kValues));
  if (lexical_) {
    lexical_cards_.save(join(folder, kLexicalCards));
    lexical_tables_.save(join(folder, kLexicalTables));
  }
  if (model_) model_->save(join(folder, kModel));
  write_text(join(folder, kManifest), manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  out.commit();
}

SelectionMemory SelectionMemory::load(const std::string& folder, std::shared_ptr<const Encoder> encoder) {
  const std::string manifest_path = join(folder, kManifest);
  std::ifstream in(manifest_path);
  if (!in) throw Error("no selection memory in " + folder + " (cannot open " + manifest_path + ")");
  const auto manifest = nlohmann::json::parse(in, nullptr, false);
  if (manifest.is_discarded()) throw Error(manifest_path + " is not valid JSON");
  if (!manifest.is_object()) throw Error(manifest_path + " is not a JSON object");
  try {
    if (!manifest.contains("format") || manifest.at("format") != kFormat)
      throw Error(manifest_path + " is not a selection memory manifest");
    const int version = manifest.at("version").get<int>();
    if (version < kFirstVersion || version > kVersion) {
      throw Error(manifest_path + " has version " + std::to_string(version) + "; this relmem reads versions " +
                  std::to_string(kFirstVersion) + " to " + std::to_string(kVersion));
    }
    const bool has_columns = version >= 2;
    const std::string encoder_name = manifest.at("encoder").get<std::string>();
    const int dim = manifest.at("dim").get<int>();
    if (!encoder) encoder = load_encoder(encoder_name);
    if (encoder->name() != encoder_name) {
      throw Error("selection memory in " + folder + " was built with encoder '" + encoder_name + "', not '" +
                  encoder->name() + "'");
    }
    if (encoder->dim() != dim) {
      throw Error("selection memory in " + folder + " holds " + std::to_string(dim) + "-d vectors but encoder '" +
                  encoder->name() + "' gives " + std::to_string(encoder->dim()));
    }
    const SelectionOptions options = read_options(manifest.at("options"), version, manifest_path);
    SelectionMemory memory(encoder, options);
    memory.cards_ = VectorIndex::load(join(folder, kCards), "cpu", "", /*mmap=*/true);
    // Read, not mapped: the pool reads the tables of 2,000 databases per question, so all of them are soon resident
    // either way, and read at once they cost no page faults while questions are answered.
    memory.tables_ = VectorIndex::load(join(folder, kTables));
    nlohmann::json values = nlohmann::json::object();  // of versions 2 and 3
    if (has_columns) {
      memory.columns_ = VectorIndex::load(join(folder, kColumns), "cpu", "", /*mmap=*/true);
      memory.columns_.read_listed_rows(true);  // the columns of up to 500 databases scattered over the file
    }
    const bool has_forms = version >= 5;
    if (has_forms) {
      memory.forms_ = VectorIndex::load(join(folder, kForms), "cpu", "", /*mmap=*/true);
      memory.forms_.read_listed_rows(true);
    }
    if (version >= 4) {
      memory.values_ = ValuePostings::load(join(folder, kValues), /*mmap=*/true);
    } else if (has_columns) {
      values = read_values_json(join(folder, kValuesJson),
                                version >= 3 ? manifest.at("checksums").at(kValuesJson).get<std::string>() : "");
    }
    if (memory.lexical_) {
      memory.lexical_cards_ = SparseVectors::load(join(folder, kLexicalCards), /*mmap=*/true);
      memory.lexical_tables_ = SparseVectors::load(join(folder, kLexicalTables), /*mmap=*/true);
      if (memory.lexical_cards_.dim() != memory.lexical_->dim() ||
          memory.lexical_tables_.dim() != memory.lexical_->dim()) {
        throw Error("selection memory in " + folder + ": lexical vectors differ in dimension from encoder '" +
                    memory.lexical_->name() + "'");
      }
    }
    if (memory.cards_.dim() != dim || memory.tables_.dim() != dim || memory.columns_.dim() != dim ||
        memory.forms_.dim() != dim) {
      throw Error("selection memory in " + folder + ": index dimension differs from the manifest's " +
                  std::to_string(dim));
    }
    memory.next_card_id_ = manifest.at("next_card_id").get<int64_t>();
    memory.next_table_id_ = manifest.at("next_table_id").get<int64_t>();
    memory.next_column_id_ = has_columns ? manifest.at("next_column_id").get<int64_t>() : 0;
    memory.next_form_id_ = has_forms ? manifest.at("next_form_id").get<int64_t>() : 0;
    std::vector<SavedDatabase> databases;
    if (version >= 4) {
      databases = load_database_list(join(folder, kDatabases));
      if (manifest.at("databases").get<uint64_t>() != databases.size())
        throw Error("selection memory in " + folder + ": " + kDatabases + " does not match the manifest");
    } else {
      for (const auto& item : manifest.at("databases")) {
        SavedDatabase db;
        db.name = item.at("name").get<std::string>();
        db.id = item.at("id").get<int64_t>();
        db.first_table = item.at("first_table").get<int64_t>();
        db.tables = item.at("tables").get<std::vector<std::string>>();
        if (has_columns) {
          db.first_column = item.at("first_column").get<int64_t>();
          db.columns = item.at("columns").get<int64_t>();
        }
        db.description = item.value("description", "");
        db.examples = item.value("examples", std::vector<std::string>{});
        // Folders saved before refresh() existed lack the file: refresh() re-embeds their databases.
        db.path = item.value("path", "");
        db.size = item.value("size", int64_t{-1});
        db.mtime_ns = item.value("mtime_ns", int64_t{0});
        databases.push_back(std::move(db));
      }
    }
    int64_t table_count = 0, column_count = 0, form_count = 0;
    memory.name_of_card_.reserve(databases.size());
    memory.entry_of_card_.reserve(databases.size());
    for (auto& db : databases) {
      Entry entry;
      const std::string& name = db.name;
      entry.id = db.id;
      entry.first_table = db.first_table;
      entry.tables = std::move(db.tables);
      entry.first_column = db.first_column;
      entry.columns = db.columns;
      entry.table_columns = std::move(db.table_columns);
      entry.first_form = db.first_form;
      entry.forms = db.forms;
      if (entry.columns < 0 || entry.forms < 0)
        throw Error("selection memory in " + folder + ": '" + name + "' has a negative column or question form count");
      if (!table_columns_fit(entry.table_columns, entry.tables.size(), entry.columns)) {
        throw Error("selection memory in " + folder + ": the column counts of '" + name + "' do not match its tables");
      }
      entry.description = std::move(db.description);
      entry.examples = std::move(db.examples);
      entry.file.path = std::move(db.path);
      entry.file.stamp = FileStamp{db.size, db.mtime_ns};
      if (!memory.cards_.contains(entry.id) || (memory.lexical_ && !memory.lexical_cards_.contains(entry.id))) {
        throw Error("selection memory in " + folder + ": card of '" + name + "' is missing from " + kCards);
      }
      for (int64_t i = 0; i < static_cast<int64_t>(entry.tables.size()); ++i) {
        if (!memory.tables_.contains(entry.first_table + i) ||
            (memory.lexical_ && !memory.lexical_tables_.contains(entry.first_table + i))) {
          throw Error("selection memory in " + folder + ": table '" + entry.tables[static_cast<size_t>(i)] + "' of '" +
                      name + "' is missing from " + kTables);
        }
      }
      auto require_rows = [&](const VectorIndex& index, int64_t first, int64_t count, const char* what,
                              const char* file) {
        for (int64_t i = 0; i < count; ++i)
          if (!index.contains(first + i))
            throw Error("selection memory in " + folder + ": " + what + " of '" + name + "' is missing from " + file);
      };
      require_rows(memory.columns_, entry.first_column, entry.columns, "a column", kColumns);
      require_rows(memory.forms_, entry.first_form, entry.forms, "a question form", kForms);
      table_count += static_cast<int64_t>(entry.tables.size());
      column_count += entry.columns;
      form_count += entry.forms;
      if (values.contains(name)) {
        if (!values.at(name).is_array()) throw Error(join(folder, kValuesJson) + " is malformed: '" + name + "' is not a list");
        memory.values_.add(entry.id, values.at(name).get<std::vector<std::string>>());
      }
      auto [it, inserted] = memory.entries_.emplace(name, std::move(entry));
      if (!inserted) throw Error("selection memory in " + folder + " lists '" + name + "' twice");
      memory.name_of_card_[it->second.id] = &it->first;
      memory.entry_of_card_[it->second.id] = &it->second;
      memory.card_codes_.add(it->second.id, memory.cards_.reconstruct(it->second.id).data());
      for (int64_t i = 0; i < static_cast<int64_t>(it->second.tables.size()); ++i)
        memory.name_of_table_[it->second.first_table + i] = &it->first;
    }
    if (memory.cards_.size() != static_cast<int64_t>(memory.entries_.size()) || memory.tables_.size() != table_count ||
        memory.columns_.size() != column_count || memory.forms_.size() != form_count ||
        static_cast<int64_t>(memory.name_of_table_.size()) != table_count) {
      throw Error("selection memory in " + folder + ": the indexes do not match the manifest");
    }
    if (memory.lexical_ && (memory.lexical_cards_.size() != memory.cards_.size() ||
                            memory.lexical_tables_.size() != memory.tables_.size())) {
      throw Error("selection memory in " + folder + ": the lexical vectors do not match the manifest");
    }
    if (!manifest.at("model").is_null()) {
      auto model = std::make_shared<RelevanceModel>(RelevanceModel::load(join(folder, kModel)));
      memory.set_model(model);
    }
    const auto& c = manifest.at("calibration");
    SelectionCalibration calibration;
    calibration.scale = c.at("scale").get<float>();
    calibration.bias = c.at("bias").get<float>();
    calibration.threshold = c.at("threshold").get<float>();
    calibration.fitted = c.value("fitted", false);
    calibration.lead = c.value("lead", 0.0f);  // absent from memories saved before the lead was a feature
    calibration.gated = c.value("gated", false);  // and these before the gate
    calibration.gate_scale = c.value("gate_scale", 0.0f);
    calibration.gate_bias = c.value("gate_bias", 0.0f);
    memory.set_calibration(calibration);
    return memory;
  } catch (const nlohmann::json::exception& e) {
    throw Error(manifest_path + " is malformed: " + e.what());
  }
}

}  // namespace relmem
