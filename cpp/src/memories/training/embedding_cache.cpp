// Cache file: "RMEC" | u64 rows | u64 cols | f32 values[rows*cols] | u64 FNV-1a of the values.
#include "embedding_cache.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../../common/new_file.hpp"

namespace relmem {
namespace {

constexpr char kMagic[4] = {'R', 'M', 'E', 'C'};

uint64_t fnv1a(const char* data, size_t size, uint64_t hash = 0xcbf29ce484222325ULL) {
  for (size_t i = 0; i < size; ++i) hash = (hash ^ static_cast<uint8_t>(data[i])) * 0x100000001b3ULL;
  return hash;
}

std::string cache_key(const Encoder& encoder, const std::vector<std::string>& texts) {
  const std::string name = encoder.name();
  uint64_t hash = fnv1a(name.data(), name.size() + 1);
  for (const auto& text : texts) hash = fnv1a(text.data(), text.size() + 1, hash);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(hex) + "-" + std::to_string(texts.size());
}

bool read_cache(const std::string& path, size_t rows, size_t cols, RowMatrix& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t payload = rows * cols * sizeof(float);
  if (bytes.size() != 4 + 16 + payload + 8 || std::memcmp(bytes.data(), kMagic, 4) != 0) return false;
  uint64_t stored_rows, stored_cols, stored_hash;
  std::memcpy(&stored_rows, bytes.data() + 4, 8);
  std::memcpy(&stored_cols, bytes.data() + 12, 8);
  std::memcpy(&stored_hash, bytes.data() + 20 + payload, 8);
  if (stored_rows != rows || stored_cols != cols || stored_hash != fnv1a(bytes.data() + 20, payload)) return false;
  out.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  std::memcpy(out.data(), bytes.data() + 20, payload);
  return true;
}

void write_cache(const std::string& path, const RowMatrix& matrix) {
  const uint64_t rows = static_cast<uint64_t>(matrix.rows()), cols = static_cast<uint64_t>(matrix.cols());
  const size_t payload = static_cast<size_t>(matrix.size()) * sizeof(float);
  const uint64_t hash = fnv1a(reinterpret_cast<const char*>(matrix.data()), payload);
  const std::string temporary = make_temporary_sibling(path, "embedding cache");
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write embedding cache file " + temporary);
    out.write(kMagic, 4);
    out.write(reinterpret_cast<const char*>(&rows), 8);
    out.write(reinterpret_cast<const char*>(&cols), 8);
    out.write(reinterpret_cast<const char*>(matrix.data()), static_cast<std::streamsize>(payload));
    out.write(reinterpret_cast<const char*>(&hash), 8);
    if (!out) {
      std::filesystem::remove(temporary);
      throw Error("failed writing embedding cache file " + temporary);
    }
  }
  move_into_place(temporary, path, "embedding cache");
}

}  // namespace

RowMatrix encode_cached(const Encoder& encoder, const std::vector<std::string>& texts, const std::string& cache_dir) {
  if (cache_dir.empty()) return encoder.encode(texts);
  std::error_code error;
  std::filesystem::create_directories(cache_dir, error);
  if (error) throw Error("cannot create embedding cache directory " + cache_dir + ": " + error.message());
  const std::string path = cache_dir + "/" + cache_key(encoder, texts) + ".emb";
  RowMatrix cached;
  if (read_cache(path, texts.size(), static_cast<size_t>(encoder.dim()), cached)) return cached;
  RowMatrix encoded = encoder.encode(texts);
  write_cache(path, encoded);
  return encoded;
}

}  // namespace relmem
