#include "relmem/memories/values/value_store.hpp"

#include <algorithm>
#include <cctype>

#include "../../common/ascii_case.hpp"
#include "relmem/memories/text/string_similarity.hpp"

namespace relmem {
namespace {

bool is_date_type(const std::string& declared_type) {
  const std::string t = to_upper(declared_type);
  return t.find("DATE") != std::string::npos || t.find("TIME") != std::string::npos;
}

struct ColumnRead {
  ColumnValues info;
  std::vector<std::string> texts;  // indexed values, most frequent first
  std::string error;
};

QueryResult run(const Catalog& catalog, const std::string& db, const std::string& sql, int64_t max_rows,
                const std::string& what) {
  QueryResult result = catalog.execute(db, sql, ExecOptions{120.0, max_rows});
  if (!result.ok()) throw Error("reading values of " + db + "." + what + ": " + result.error->message);
  return result;
}

ColumnRead read_column(const Catalog& catalog, const std::string& db, const Table& table, const Column& column,
                       const ValueMemoryOptions& options) {
  ColumnRead read;
  ColumnValues& info = read.info;
  info.table = table.name;
  info.column = column.name;
  info.declared_type = column.type;
  const std::string what = table.name + "." + column.name;
  const std::string c = quote_identifier(column.name), t = quote_identifier(table.name);
  const std::string number = "CASE WHEN typeof(" + c + ") IN ('integer', 'real') THEN " + c + " END";
  QueryResult stats = run(catalog, db,
                          "SELECT count(" + c + "), sum(typeof(" + c + ") = 'text'), min(" + number + "), max(" +
                              number + "), min(" + c + "), max(" + c + ") FROM " + t,
                          1, what);
  const auto& row = stats.rows.at(0);
  const int64_t non_null = std::holds_alternative<int64_t>(row[0]) ? std::get<int64_t>(row[0]) : 0;
  const int64_t text_rows = std::holds_alternative<int64_t>(row[1]) ? std::get<int64_t>(row[1]) : 0;
  if (non_null == 0) return read;
  if (is_date_type(column.type)) {
    info.kind = ColumnKind::Date;
    info.min = row[4];
    info.max = row[5];
    return read;
  }
  info.min = row[2];
  info.max = row[3];
  info.kind = std::holds_alternative<std::monostate>(info.min) ? ColumnKind::Empty : ColumnKind::Numeric;
  if (text_rows == 0) return read;

  const int64_t cap = options.max_values_per_column;
  QueryResult values = run(catalog, db,
                           "SELECT " + c + ", count(*) AS n FROM " + t + " WHERE typeof(" + c + ") = 'text' GROUP BY " +
                               c + " ORDER BY n DESC, " + c + " LIMIT " + std::to_string(cap + 1),
                           cap + 1, what);
  info.text_values = static_cast<int64_t>(values.rows.size());
  info.truncated = info.text_values > cap;
  const size_t kept = std::min<size_t>(values.rows.size(), static_cast<size_t>(cap));
  size_t chars = 0;
  for (size_t i = 0; i < kept; ++i) {
    auto* text = std::get_if<std::string>(&values.rows[i][0]);
    if (!text) continue;
    const size_t length = code_points(*text).size();
    chars += length;
    if (static_cast<int>(length) > options.max_value_chars) {
      ++info.skipped_long;
      continue;
    }
    read.texts.push_back(std::move(*text));
  }
  info.average_chars = kept ? static_cast<double>(chars) / kept : 0.0;
  if (info.average_chars > options.max_average_chars) {
    info.kind = ColumnKind::FreeText;
    read.texts.clear();
  } else if (!read.texts.empty()) {
    info.kind = ColumnKind::Text;
  }
  return read;
}

void add_to(std::unordered_map<std::string, std::vector<uint32_t>>& map, const std::string& key, uint32_t id) {
  if (key.empty()) return;
  auto& ids = map[key];
  if (ids.empty() || ids.back() != id) ids.push_back(id);
}

template <typename Map>
size_t map_bytes(const Map& map) {
  size_t bytes = map.bucket_count() * sizeof(void*);
  for (const auto& [key, ids] : map) bytes += sizeof(key) + sizeof(ids) + ids.capacity() * sizeof(uint32_t) + 16;
  return bytes;
}

}  // namespace

std::string column_kind_name(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::Text:
      return "text";
    case ColumnKind::Numeric:
      return "numeric";
    case ColumnKind::Date:
      return "date";
    case ColumnKind::FreeText:
      return "free_text";
    case ColumnKind::Empty:
      return "empty";
  }
  return "empty";
}

ColumnKind parse_column_kind(const std::string& name) {
  for (ColumnKind kind :
       {ColumnKind::Text, ColumnKind::Numeric, ColumnKind::Date, ColumnKind::FreeText, ColumnKind::Empty})
    if (column_kind_name(kind) == name) return kind;
  throw Error("unknown column kind '" + name + "'");
}

void DatabaseValues::index_lexical() {
  const size_t n = values.size();
  normalized.assign(n, std::string());
  trigram_offsets.assign(n + 1, 0);
  trigrams.clear();
  postings.clear();
  by_key.clear();
  by_initials.clear();
  sorted_compact.clear();
  std::vector<std::vector<uint32_t>> grams(n);
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) {
    normalized[i] = normalize_value(values[i]);
    grams[i] = trigram_set(normalized[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    trigram_offsets[i + 1] = trigram_offsets[i] + static_cast<uint32_t>(grams[i].size());
    trigrams.insert(trigrams.end(), grams[i].begin(), grams[i].end());
    const uint32_t id = static_cast<uint32_t>(i);
    for (uint32_t g : grams[i]) postings[g].push_back(id);
    const auto tokens = value_tokens(normalized[i]);
    const std::string compact = compact_value(normalized[i]);
    add_to(by_key, compact, id);
    const std::string key = content_key(tokens);
    if (key != compact) add_to(by_key, key, id);
    if (tokens.size() >= 2) {
      add_to(by_initials, initials_text(tokens, false), id);
      add_to(by_initials, initials_text(tokens, true), id);
    }
    if (!compact.empty()) sorted_compact.emplace_back(compact, id);
  }
  std::sort(sorted_compact.begin(), sorted_compact.end());
}

std::vector<uint32_t> DatabaseValues::trigrams_of(uint32_t id) const {
  return std::vector<uint32_t>(trigrams.begin() + trigram_offsets[id], trigrams.begin() + trigram_offsets[id + 1]);
}

const ColumnValues* DatabaseValues::find_column(const std::string& table, const std::string& column) const {
  for (const auto& c : columns)
    if (iequals(c.table, table) && iequals(c.column, column)) return &c;
  return nullptr;
}

size_t DatabaseValues::string_bytes() const {
  size_t bytes = 0;
  for (const auto& v : values) bytes += sizeof(v) + (v.size() > 15 ? v.capacity() : 0);
  for (const auto& v : normalized) bytes += sizeof(v) + (v.size() > 15 ? v.capacity() : 0);
  return bytes + column_of.capacity() * sizeof(uint32_t);
}

size_t DatabaseValues::lexical_bytes() const {
  size_t bytes = (trigram_offsets.capacity() + trigrams.capacity()) * sizeof(uint32_t);
  bytes += postings.bucket_count() * sizeof(void*);
  for (const auto& [gram, ids] : postings) bytes += sizeof(gram) + sizeof(ids) + ids.capacity() * sizeof(uint32_t) + 16;
  bytes += map_bytes(by_key) + map_bytes(by_initials);
  for (const auto& [compact, id] : sorted_compact)
    bytes += sizeof(compact) + sizeof(id) + (compact.size() > 15 ? compact.capacity() : 0);
  return bytes;
}

size_t DatabaseValues::vector_bytes() const {
  return vectors ? static_cast<size_t>(vectors->size()) * vectors->dim() * sizeof(float) : 0;
}

std::unique_ptr<DatabaseValues> read_database_values(const Catalog& catalog, const std::string& db,
                                                     const ValueMemoryOptions& options) {
  const Schema& schema = catalog.schema(db);
  auto out = std::make_unique<DatabaseValues>();
  out->name = db;
  out->path = schema.path;
  out->stamp = stamp_file(schema.path);

  std::vector<std::pair<const Table*, const Column*>> columns;
  for (const auto& table : schema.tables)
    for (const auto& column : table.columns) columns.emplace_back(&table, &column);
  std::vector<ColumnRead> reads(columns.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < static_cast<int64_t>(columns.size()); ++i) {
    try {
      reads[i] = read_column(catalog, db, *columns[i].first, *columns[i].second, options);
    } catch (const std::exception& e) {  // no exception may leave an OpenMP region
      reads[i].error = e.what();
    }
  }
  for (auto& read : reads) {
    if (!read.error.empty()) throw Error(read.error);
    read.info.first = static_cast<uint32_t>(out->values.size());
    read.info.count = static_cast<uint32_t>(read.texts.size());
    const uint32_t column_index = static_cast<uint32_t>(out->columns.size());
    for (auto& text : read.texts) {
      out->values.push_back(std::move(text));
      out->column_of.push_back(column_index);
    }
    out->columns.push_back(std::move(read.info));
  }
  out->index_lexical();
  return out;
}

void encode_database_values(DatabaseValues& db, const Encoder& encoder, const ValueMemoryOptions& options) {
  std::vector<int64_t> ids;
  for (auto& column : db.columns) {
    const uint32_t n = static_cast<uint32_t>(std::min<int64_t>(column.count, options.max_vectors_per_column));
    size_t with_digit = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const std::string& value = db.values[column.first + i];
      with_digit += std::any_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    }
    column.vectors = with_digit > options.max_digit_share * n ? 0 : n;
    for (uint32_t i = 0; i < column.vectors; ++i) ids.push_back(column.first + i);
  }
  db.vectors.reset();
  if (ids.empty()) return;

  std::unordered_map<std::string, int64_t> row_of_text;  // foreign keys repeat values across tables
  std::vector<std::string> texts;
  std::vector<int64_t> row_of_id(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    auto [it, inserted] = row_of_text.emplace(db.values[ids[i]], static_cast<int64_t>(texts.size()));
    if (inserted) texts.push_back(it->first);
    row_of_id[i] = it->second;
  }
  RowMatrix vectors(static_cast<Eigen::Index>(texts.size()), encoder.dim());
  const size_t batch = static_cast<size_t>(std::max(1, options.encode_batch));
  for (size_t begin = 0; begin < texts.size(); begin += batch) {
    const size_t end = std::min(texts.size(), begin + batch);
    const RowMatrix part = encoder.encode(std::vector<std::string>(texts.begin() + begin, texts.begin() + end));
    if (part.rows() != static_cast<Eigen::Index>(end - begin) || part.cols() != encoder.dim())
      throw Error("encoder " + encoder.name() + " returned a matrix of the wrong shape");
    vectors.middleRows(static_cast<Eigen::Index>(begin), part.rows()) = part;
  }
  RowMatrix by_id(static_cast<Eigen::Index>(ids.size()), encoder.dim());
  for (size_t i = 0; i < ids.size(); ++i) by_id.row(static_cast<Eigen::Index>(i)) = vectors.row(row_of_id[i]);
  db.vectors = std::make_unique<VectorIndex>(encoder.dim(), Metric::Cosine, "cpu", "int8");  // a quarter of fp32
  db.vectors->add(by_id.data(), by_id.rows(), ids.data());
}

int64_t DatabaseValues::find_value(const ColumnValues& column, const std::string& value) const {
  auto it = by_key.find(compact_value(normalize_value(value)));
  if (it == by_key.end()) return -1;
  for (uint32_t id : it->second)
    if (id >= column.first && id < column.first + column.count && values[id] == value) return id;
  return -1;
}

}  // namespace relmem
