#pragma once
// Helpers for tests: temporary folders and small SQLite files made from SQL scripts.
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace relmem_test {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("relmem-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline void make_database(const std::string& path, const std::string& script) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("cannot create " + path);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, script.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("script failed: " + message);
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Two tables with a primary key, a foreign key, text and numeric columns.
inline const char* kConcertScript = R"sql(
  CREATE TABLE stadium (stadium_id INTEGER PRIMARY KEY, name TEXT NOT NULL, city VARCHAR(40), capacity INT);
  CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, year INTEGER,
                        stadium_id INTEGER REFERENCES stadium(stadium_id));
  INSERT INTO stadium VALUES (1, 'Raith Rovers', 'LA', 10104), (2, 'Ayr United', 'SF', 11998),
                             (3, 'Balmoor', 'LA', 4000);
  INSERT INTO concert VALUES (1, 'Auditions', 2014, 1), (2, 'Super bootcamp', 2014, 2), (3, 'Home Visits', 2015, 1);
)sql";

// n standard normal floats.
inline std::vector<float> normal_values(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> out(n);
  for (auto& v : out) v = normal(rng);
  return out;
}

}  // namespace relmem_test
