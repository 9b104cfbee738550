#pragma once
// The list of a saved selection memory's databases (databases.bin): what each one's entry holds besides its vectors.
// Binary, so that a memory of 100,000 databases opens without parsing tens of megabytes of JSON. Little-endian:
//   "RMDL" | u32 version (1 to 3) | u64 count | per database: name | i64 card id | i64 first table id | u32 tables
//   | table names | i64 first column id | i64 columns | u32 tables | i64 columns per table (version 2) | i64 first
//   question form id | i64 question forms (version 3) | description | u32 examples | examples | file path | i64 file
//   size | i64 file mtime_ns | u64 FNV-1a checksum (64-bit words) of every byte before it.
// Each text is u32 byte length | UTF-8 bytes.
#include <cstdint>
#include <string>
#include <vector>

namespace relmem {

struct SavedDatabase {
  std::string name;
  int64_t id = 0;
  int64_t first_table = 0;
  std::vector<std::string> tables;
  int64_t first_column = 0;
  int64_t columns = 0;
  std::vector<int64_t> table_columns;  // empty in version 1 files
  int64_t first_form = 0;  // 0 and 0 in files before version 3
  int64_t forms = 0;
  std::string description;
  std::vector<std::string> examples;
  std::string path;
  int64_t size = -1;
  int64_t mtime_ns = 0;
};

void save_database_list(const std::vector<SavedDatabase>& databases, const std::string& path);
// relmem::Error naming the file when it is missing, damaged or malformed.
std::vector<SavedDatabase> load_database_list(const std::string& path);

}  // namespace relmem
