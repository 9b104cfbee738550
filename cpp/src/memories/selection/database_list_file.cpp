#include "database_list_file.hpp"

#include "../../common/checksummed_file.hpp"

namespace relmem {
namespace {

// Version 2 adds each table's column count, version 3 the question forms' ids.
constexpr ChecksummedFormat kDatabaseListFile{"database list", "RMDL", 1, 3, /*checksum_word_size=*/8};
constexpr uint32_t kMaxText = 1u << 30;

void write_text(ChecksummedFileWriter& file, const std::string& text) {
  file.write_values(static_cast<uint32_t>(text.size()));
  file.write(text.data(), text.size());
}

void write_texts(ChecksummedFileWriter& file, const std::vector<std::string>& texts) {
  file.write_values(static_cast<uint32_t>(texts.size()));
  for (const auto& text : texts) write_text(file, text);
}

std::string read_text(ChecksummedFileReader& file) {
  const auto size = file.read_value<uint32_t>();
  if (size > kMaxText) throw file.error("is malformed");
  file.expect_room_for(size, 1);
  std::string text(size, '\0');
  file.read(text.data(), size);
  return text;
}

std::vector<std::string> read_texts(ChecksummedFileReader& file) {
  const auto count = file.read_value<uint32_t>();
  file.expect_room_for(count, sizeof(uint32_t));
  std::vector<std::string> texts(count);
  for (auto& text : texts) text = read_text(file);
  return texts;
}

}  // namespace

void save_database_list(const std::vector<SavedDatabase>& databases, const std::string& path) {
  ChecksummedFileWriter file(kDatabaseListFile, path);
  file.write_values(static_cast<uint64_t>(databases.size()));
  for (const auto& db : databases) {
    write_text(file, db.name);
    file.write_values(db.id, db.first_table);
    write_texts(file, db.tables);
    file.write_values(db.first_column, db.columns);
    file.write_values(static_cast<uint32_t>(db.table_columns.size()));
    for (int64_t count : db.table_columns) file.write_values(count);
    file.write_values(db.first_form, db.forms);
    write_text(file, db.description);
    write_texts(file, db.examples);
    write_text(file, db.path);
    file.write_values(db.size, db.mtime_ns);
  }
  file.commit();
}

std::vector<SavedDatabase> load_database_list(const std::string& path) {
  ChecksummedFileReader file(kDatabaseListFile, path);
  const auto count = file.read_value<uint64_t>();
  file.expect_room_for(count, 5 * sizeof(uint32_t) + 6 * sizeof(int64_t));  // the smallest entry
  std::vector<SavedDatabase> databases(static_cast<size_t>(count));
  for (auto& db : databases) {
    db.name = read_text(file);
    db.id = file.read_value<int64_t>();
    db.first_table = file.read_value<int64_t>();
    db.tables = read_texts(file);
    db.first_column = file.read_value<int64_t>();
    db.columns = file.read_value<int64_t>();
    if (file.version() >= 2) {
      const auto tables = file.read_value<uint32_t>();
      file.expect_room_for(tables, sizeof(int64_t));
      db.table_columns.resize(tables);
      for (auto& columns : db.table_columns) columns = file.read_value<int64_t>();
    }
    if (file.version() >= 3) {
      db.first_form = file.read_value<int64_t>();
      db.forms = file.read_value<int64_t>();
    }
    db.description = read_text(file);
    db.examples = read_texts(file);
    db.path = read_text(file);
    db.size = file.read_value<int64_t>();
    db.mtime_ns = file.read_value<int64_t>();
  }
  file.finish();
  return databases;
}

}  // namespace relmem
