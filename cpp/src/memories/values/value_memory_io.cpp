// Saving and loading the value memory: manifest.json (encoder, options, one entry per database with the file's
// size and modification time for refresh) plus <db>.values (MessagePack: columns and values) and <db>.vectors.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "../../common/atomic_folder.hpp"
#include "value_options_json.hpp"
#include "relmem/memories/values/value_memory.hpp"

namespace relmem {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "relmem-value-memory";
constexpr int kVersion = 2;  // 2: each database's entry holds its values file's checksum
constexpr int kFirstVersion = 1;

json value_to_json(const Value& value) {
  if (auto* i = std::get_if<int64_t>(&value)) return *i;
  if (auto* d = std::get_if<double>(&value)) return *d;
  if (auto* s = std::get_if<std::string>(&value)) return *s;
  return nullptr;
}

Value value_from_json(const json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  return std::monostate{};
}

json column_to_json(const ColumnValues& c) {
  return json{{"table", c.table},
              {"column", c.column},
              {"declared_type", c.declared_type},
              {"kind", column_kind_name(c.kind)},
              {"text_values", c.text_values},
              {"truncated", c.truncated},
              {"skipped_long", c.skipped_long},
              {"average_chars", c.average_chars},
              {"first", c.first},
              {"count", c.count},
              {"vectors", c.vectors},
              {"min", value_to_json(c.min)},
              {"max", value_to_json(c.max)}};
}

ColumnValues column_from_json(const json& j) {
  ColumnValues c;
  c.table = j.at("table").get<std::string>();
  c.column = j.at("column").get<std::string>();
  c.declared_type = j.at("declared_type").get<std::string>();
  c.kind = parse_column_kind(j.at("kind").get<std::string>());
  c.text_values = j.at("text_values").get<int64_t>();
  c.truncated = j.at("truncated").get<bool>();
  c.skipped_long = j.at("skipped_long").get<int64_t>();
  c.average_chars = j.at("average_chars").get<double>();
  c.first = j.at("first").get<uint32_t>();
  c.count = j.at("count").get<uint32_t>();
  c.vectors = j.at("vectors").get<uint32_t>();
  c.min = value_from_json(j.at("min"));
  c.max = value_from_json(j.at("max"));
  return c;
}

// A file name for a database name: letters, digits, '-', '_' and '.' kept, anything else as %XX.
std::string file_stem(const std::string& name) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '-' || c == '_' || (c == '.' && !out.empty())) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out.empty() ? "%" : out;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error("cannot write " + path.string());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read value memory file " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::unique_ptr<DatabaseValues> load_database(const fs::path& folder, const json& entry, int dim) {
  auto d = std::make_unique<DatabaseValues>();
  d->name = entry.at("name").get<std::string>();
  d->path = entry.at("path").get<std::string>();
  d->stamp = FileStamp{entry.at("size").get<int64_t>(), entry.at("mtime_ns").get<int64_t>()};
  const fs::path values_path = folder / entry.at("values").get<std::string>();
  const std::string bytes = read_file(values_path);
  if (entry.contains("values_checksum") && content_checksum(bytes) != entry.at("values_checksum").get<std::string>())
    throw Error("value memory file " + values_path.string() + " is corrupt (checksum mismatch)");
  json stored;
  try {
    stored = json::from_msgpack(bytes);
    for (const auto& c : stored.at("columns")) d->columns.push_back(column_from_json(c));
    d->values = stored.at("values").get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    throw Error("corrupt value memory file " + values_path.string() + ": " + e.what());
  }
  uint32_t next = 0;
  for (uint32_t i = 0; i < d->columns.size(); ++i) {
    const ColumnValues& c = d->columns[i];
    if (c.first != next || c.vectors > c.count || static_cast<size_t>(c.first) + c.count > d->values.size())
      throw Error("corrupt value memory file " + values_path.string() + ": bad ranges for " + c.table + "." + c.column);
    d->column_of.insert(d->column_of.end(), c.count, i);
    next += c.count;
  }
  if (next != d->values.size()) throw Error("corrupt value memory file " + values_path.string() + ": value count");
  if (!entry.at("vectors").is_null()) {
    d->vectors =
        std::make_unique<VectorIndex>(VectorIndex::load((folder / entry.at("vectors").get<std::string>()).string(),
                                                        "cpu", "", /*mmap=*/true));
    if (d->vectors->dim() != dim)
      throw Error("value memory vectors of '" + d->name + "' have dimension " + std::to_string(d->vectors->dim()) +
                  ", the encoder " + std::to_string(dim));
  }
  d->index_lexical();
  return d;
}

}  // namespace

void ValueMemory::save(const std::string& folder_name) const {
  AtomicFolder out(folder_name);
  const fs::path folder(out.path());
  json entries = json::array();
  std::set<std::string> written;
  for (const auto& [name, d] : snapshot()) {
    std::string stem = file_stem(name);
    while (written.count(stem)) stem += "_";
    written.insert(stem);
    json columns = json::array();
    for (const auto& c : d->columns) columns.push_back(column_to_json(c));
    std::string bytes;
    json::to_msgpack(json{{"columns", columns}, {"values", d->values}}, bytes);
    write_file(folder / (stem + ".values"), bytes);
    json vectors = nullptr;
    if (d->vectors) {
      d->vectors->save((folder / (stem + ".vectors")).string());
      vectors = stem + ".vectors";
    }
    entries.push_back(json{{"name", name},
                           {"path", d->path},
                           {"size", d->stamp.size},
                           {"mtime_ns", d->stamp.mtime_ns},
                           {"values", stem + ".values"},
                           {"values_checksum", content_checksum(bytes)},
                           {"vectors", vectors}});
  }
  const json manifest{{"format", kFormat},
                      {"version", kVersion},
                      {"encoder", encoder_->name()},
                      {"dim", encoder_->dim()},
                      {"options", options_},
                      {"weights", weights_},
                      {"databases", entries}};
  write_file(folder / "manifest.json", manifest.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  save_aliases(folder.string());
  out.commit();
}

ValueMemory ValueMemory::load(const std::string& folder_name, std::shared_ptr<const Encoder> encoder) {
  const fs::path folder(folder_name);
  const fs::path manifest_path = folder / "manifest.json";
  json manifest;
  {
    std::ifstream in(manifest_path);
    if (!in) throw Error("no value memory in " + folder_name + " (missing manifest.json)");
    try {
      manifest = json::parse(in);
    } catch (const json::exception& e) {
      throw Error("corrupt " + manifest_path.string() + ": " + e.what());
    }
  }
  try {
    if (!manifest.is_object()) throw Error(manifest_path.string() + " is not a JSON object");
    const int version = manifest.at("version").get<int>();
    if (manifest.at("format").get<std::string>() != kFormat || version < kFirstVersion || version > kVersion)
      throw Error(manifest_path.string() + " is not a relmem value memory of versions " + std::to_string(kFirstVersion) +
                  " to " + std::to_string(kVersion));
    const std::string encoder_name = manifest.at("encoder").get<std::string>();
    if (!encoder) {
      encoder = load_encoder(encoder_name);
    } else if (encoder->name() != encoder_name) {
      throw Error("the value memory in " + folder_name + " was built with encoder '" + encoder_name + "', not '" +
                  encoder->name() + "'");
    }
    ValueMemory memory(encoder, manifest.at("options").get<ValueMemoryOptions>());
    memory.weights_ = manifest.at("weights").get<FusionWeights>();
    for (const auto& entry : manifest.at("databases")) {
      if (version >= 2 && !entry.contains("values_checksum"))
        throw Error(manifest_path.string() + " is malformed: a database entry lacks values_checksum");
      auto d = load_database(folder, entry, encoder->dim());
      const std::string name = d->name;
      memory.databases_[name] = std::move(d);
    }
    memory.aliases_ = ValueAliases::load(aliases_path(folder_name));
    return memory;
  } catch (const json::exception& e) {
    throw Error("corrupt " + manifest_path.string() + ": " + e.what());
  }
}

}  // namespace relmem
