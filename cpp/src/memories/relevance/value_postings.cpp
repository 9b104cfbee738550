#include "relmem/memories/relevance/value_postings.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "../../common/checksummed_file.hpp"
#include "../../common/mapped_file.hpp"
#include "relmem/common.hpp"
#include "relmem/memories/text/question_spans.hpp"
#include "relmem/memories/text/string_similarity.hpp"

namespace relmem {
namespace {

constexpr ChecksummedFormat kValuePostingsFile{"value postings", "RMVP", 1, 1, /*checksum_word_size=*/8};
constexpr uint64_t kPreambleSize = 8;  // magic and version

struct Header {
  uint64_t values = 0;
  uint64_t text_bytes = 0;
  uint64_t postings = 0;
  uint64_t databases = 0;
};
static_assert(sizeof(Header) == 32, "the header is written as it is laid out in memory");

struct Layout {
  uint64_t text_offsets = 0, texts = 0, holder_offsets = 0, holders = 0, databases = 0, database_offsets = 0,
           value_numbers = 0, end = 0;
};

// Zero when a count is too large for any file (the caller then finds the size wrong).
Layout layout_of(const Header& h) {
  Layout l;
  constexpr uint64_t kMax = uint64_t{1} << 40;
  if (h.values > kMax || h.text_bytes > kMax || h.postings > kMax || h.databases > kMax) return l;
  l.text_offsets = section_start(kPreambleSize + sizeof(Header));
  l.texts = section_start(l.text_offsets + (h.values + 1) * 8);
  l.holder_offsets = section_start(l.texts + h.text_bytes);
  l.holders = section_start(l.holder_offsets + (h.values + 1) * 8);
  l.databases = section_start(l.holders + h.postings * 8);
  l.database_offsets = section_start(l.databases + h.databases * 8);
  l.value_numbers = section_start(l.database_offsets + (h.databases + 1) * 8);
  l.end = section_start(l.value_numbers + h.postings * 4);
  return l;
}

// Offsets from 0 to `total`, never decreasing.
bool valid_offsets(const uint64_t* offsets, uint64_t count, uint64_t total) {
  if (offsets[0] != 0 || offsets[count] != total) return false;
  for (uint64_t i = 0; i < count; ++i)
    if (offsets[i + 1] < offsets[i]) return false;
  return true;
}

template <typename T>
bool ascending(const T* values, uint64_t begin, uint64_t end) {
  for (uint64_t i = begin + 1; i < end; ++i)
    if (!(values[i - 1] < values[i])) return false;
  return true;
}

}  // namespace

// The arrays of a saved file, in a mapping or in a buffer read whole.
struct ValuePostings::Mapped {
  std::shared_ptr<const MappedFile> file;
  std::vector<uint64_t> buffer;  // 8-byte aligned
  Header header;
  const uint64_t* text_offsets = nullptr;
  const char* texts = nullptr;
  const uint64_t* holder_offsets = nullptr;
  const int64_t* holders = nullptr;
  const int64_t* databases = nullptr;
  const uint64_t* database_offsets = nullptr;
  const uint32_t* value_numbers = nullptr;

  std::string_view text(uint64_t v) const {
    return {texts + text_offsets[v], static_cast<size_t>(text_offsets[v + 1] - text_offsets[v])};
  }
  int64_t find_value(std::string_view value) const {  // -1 when absent
    uint64_t low = 0, high = header.values;
    while (low < high) {
      const uint64_t middle = low + (high - low) / 2;
      if (text(middle) < value) low = middle + 1; else high = middle;
    }
    return low < header.values && text(low) == value ? static_cast<int64_t>(low) : -1;
  }
  int64_t find_database(int64_t id) const {  // -1 when absent
    const int64_t* end = databases + header.databases;
    const int64_t* found = std::lower_bound(databases, end, id);
    return found != end && *found == id ? found - databases : -1;
  }

  // Points the arrays into `data` (`size` bytes, checksum included) after checking the whole file.
  void attach(const uint8_t* data, uint64_t size, const std::string& path) {
    auto error = [&](const std::string& problem) { return Error("value postings file " + path + " " + problem); };
    if (size < 4 || std::memcmp(data, kValuePostingsFile.magic, 4) != 0)
      throw Error(path + " is not a relmem value postings file (bad magic)");
    if (size < kPreambleSize + sizeof(Header) + sizeof(uint64_t)) throw error("is truncated");
    uint32_t version = 0;
    std::memcpy(&version, data + 4, sizeof version);
    if (version != kValuePostingsFile.version) {
      throw error("has format version " + std::to_string(version) + "; this relmem reads version " +
                  std::to_string(kValuePostingsFile.version));
    }
    std::memcpy(&header, data + kPreambleSize, sizeof header);
    const Layout l = layout_of(header);
    if (l.end == 0 || size != l.end + sizeof(uint64_t)) throw error("is truncated or has trailing bytes");
    uint64_t checksum = 0;
    std::memcpy(&checksum, data + l.end, sizeof checksum);
    if (checksum_of_bytes(data, l.end, kValuePostingsFile.checksum_word_size) != checksum)
      throw error("is corrupt (checksum mismatch)");
    text_offsets = reinterpret_cast<const uint64_t*>(data + l.text_offsets);
    texts = reinterpret_cast<const char*>(data + l.texts);
    holder_offsets = reinterpret_cast<const uint64_t*>(data + l.holder_offsets);
    holders = reinterpret_cast<const int64_t*>(data + l.holders);
    databases = reinterpret_cast<const int64_t*>(data + l.databases);
    database_offsets = reinterpret_cast<const uint64_t*>(data + l.database_offsets);
    value_numbers = reinterpret_cast<const uint32_t*>(data + l.value_numbers);
    bool ok = header.values < (uint64_t{1} << 32) && valid_offsets(text_offsets, header.values, header.text_bytes) &&
              valid_offsets(holder_offsets, header.values, header.postings) &&
              valid_offsets(database_offsets, header.databases, header.postings) &&
              ascending(databases, 0, header.databases);
    for (uint64_t v = 1; ok && v < header.values; ++v) ok = text(v - 1) < text(v);
    for (uint64_t v = 0; ok && v < header.values; ++v) ok = ascending(holders, holder_offsets[v], holder_offsets[v + 1]);
    for (uint64_t d = 0; ok && d < header.databases; ++d)
      ok = ascending(value_numbers, database_offsets[d], database_offsets[d + 1]);
    for (uint64_t p = 0; ok && p < header.postings; ++p) ok = value_numbers[p] < header.values;
    if (!ok) throw error("is malformed");
  }
};

void ValuePostings::own() {
  if (!mapped_) return;
  const std::shared_ptr<const Mapped> m = std::move(mapped_);
  for (uint64_t d = 0; d < m->header.databases; ++d) {
    std::vector<std::string> values;
    for (uint64_t p = m->database_offsets[d]; p < m->database_offsets[d + 1]; ++p)
      values.emplace_back(m->text(m->value_numbers[p]));
    add(m->databases[d], std::move(values));
  }
}

void ValuePostings::add(int64_t id, std::vector<std::string> values) {
  own();
  remove(id);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<const std::string*> keys;
  for (auto& value : values) {
    auto it = holders_.try_emplace(std::move(value)).first;
    it->second.push_back(id);
    keys.push_back(&it->first);
  }
  values_[id] = std::move(keys);
}

void ValuePostings::remove(int64_t id) {
  if (mapped_ && mapped_->find_database(id) < 0) return;
  own();
  auto it = values_.find(id);
  if (it == values_.end()) return;
  for (const std::string* value : it->second) {
    auto holders = holders_.find(*value);
    auto& ids = holders->second;
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    if (ids.empty()) holders_.erase(holders);
  }
  values_.erase(it);
}

bool ValuePostings::contains(int64_t id) const {
  return mapped_ ? mapped_->find_database(id) >= 0 : values_.count(id) > 0;
}

size_t ValuePostings::memory_bytes() const {
  size_t bytes = mapped_ ? mapped_->buffer.size() * sizeof(uint64_t) : 0;
  for (const auto& [value, ids] : holders_) bytes += sizeof(value) + value.size() + ids.size() * sizeof(int64_t);
  for (const auto& [_, keys] : values_) bytes += sizeof(int64_t) + keys.size() * sizeof(const std::string*);
  return bytes;
}

std::vector<std::string> ValuePostings::values(int64_t id) const {
  std::vector<std::string> out;
  if (mapped_) {
    const int64_t d = mapped_->find_database(id);
    if (d < 0) return out;
    for (uint64_t p = mapped_->database_offsets[d]; p < mapped_->database_offsets[d + 1]; ++p)
      out.emplace_back(mapped_->text(mapped_->value_numbers[p]));
    return out;
  }
  auto it = values_.find(id);
  if (it != values_.end())
    for (const std::string* value : it->second) out.push_back(*value);
  return out;
}

ValuePostings::Span ValuePostings::holders(const std::string& value) const {
  if (mapped_) {
    const int64_t v = mapped_->find_value(value);
    if (v < 0) return {};
    const uint64_t first = mapped_->holder_offsets[v];
    return {mapped_->holders + first, static_cast<size_t>(mapped_->holder_offsets[v + 1] - first)};
  }
  auto it = holders_.find(value);
  return it == holders_.end() ? Span{} : Span{it->second.data(), it->second.size()};
}

std::unordered_map<int64_t, float> ValuePostings::evidence(const std::vector<std::string>& phrases,
                                                           int64_t collection_size) const {
  return evidence(phrases, std::vector<float>(phrases.size(), 1.0f), collection_size);
}

std::unordered_map<int64_t, float> ValuePostings::evidence(const std::vector<std::string>& phrases,
                                                           const std::vector<float>& boosts,
                                                           int64_t collection_size) const {
  std::unordered_map<int64_t, float> out;
  for (size_t p = 0; p < phrases.size(); ++p) {
    const Span found = holders(phrases[p]);
    if (found.size == 0) continue;
    const auto count = static_cast<double>(found.size);
    const double weight = boosts[p] * std::log(std::max(static_cast<double>(collection_size), count) / count);
    for (size_t i = 0; i < found.size; ++i) out[found.ids[i]] += static_cast<float>(weight);
  }
  return out;
}

std::unordered_map<int64_t, float> ValuePostings::question_evidence(const std::string& question,
                                                                    int64_t collection_size) const {
  std::map<std::string, float> boost_of;
  for (const QuestionSpan& span : question_spans(question, 3)) {
    std::string phrase = normalize_value(question.substr(span.start, span.end - span.start));
    if (phrase.empty()) continue;
    float& boost = boost_of[phrase];
    boost = std::max(boost, is_named(question, span) ? kNamedPhraseBoost : 1.0f);
  }
  std::vector<std::string> phrases;
  std::vector<float> boosts;
  for (auto& [phrase, boost] : boost_of) {
    phrases.push_back(phrase);
    boosts.push_back(boost);
  }
  return evidence(phrases, boosts, collection_size);
}

void ValuePostings::save(const std::string& path) const {
  // Values ascending (bytewise), each with its holders ascending; each database's value numbers ascending.
  std::vector<std::string_view> texts;
  if (mapped_) {
    for (uint64_t v = 0; v < mapped_->header.values; ++v) texts.push_back(mapped_->text(v));
  } else {
    for (const auto& [value, _] : holders_) texts.emplace_back(value);
    std::sort(texts.begin(), texts.end());
  }
  std::vector<uint64_t> text_offsets{0}, holder_offsets{0};
  std::vector<int64_t> holder_ids;
  std::unordered_map<int64_t, std::vector<uint32_t>> numbers_of;
  for (size_t v = 0; v < texts.size(); ++v) {
    text_offsets.push_back(text_offsets.back() + texts[v].size());
    const Span found = holders(std::string(texts[v]));
    std::vector<int64_t> ids(found.ids, found.ids + found.size);
    std::sort(ids.begin(), ids.end());
    for (int64_t id : ids) numbers_of[id].push_back(static_cast<uint32_t>(v));
    holder_ids.insert(holder_ids.end(), ids.begin(), ids.end());
    holder_offsets.push_back(holder_ids.size());
  }
  std::vector<int64_t> databases;
  for (const auto& [id, _] : numbers_of) databases.push_back(id);
  std::sort(databases.begin(), databases.end());
  std::vector<uint64_t> database_offsets{0};
  std::vector<uint32_t> value_numbers;
  for (int64_t id : databases) {
    const auto& numbers = numbers_of[id];
    value_numbers.insert(value_numbers.end(), numbers.begin(), numbers.end());
    database_offsets.push_back(value_numbers.size());
  }
  const Header header{texts.size(), text_offsets.back(), holder_ids.size(), databases.size()};

  ChecksummedFileWriter file(kValuePostingsFile, path);
  uint64_t offset = kPreambleSize;
  auto section = [&](const void* data, uint64_t size) { write_section(file, offset, data, size); };
  section(&header, sizeof header);
  section(text_offsets.data(), text_offsets.size() * 8);
  for (const auto& text : texts) file.write(text.data(), text.size());
  offset += header.text_bytes;
  pad_to_section(file, offset);
  section(holder_offsets.data(), holder_offsets.size() * 8);
  section(holder_ids.data(), holder_ids.size() * 8);
  section(databases.data(), databases.size() * 8);
  section(database_offsets.data(), database_offsets.size() * 8);
  section(value_numbers.data(), value_numbers.size() * 4);
  file.commit();
}

ValuePostings ValuePostings::load(const std::string& path, bool mmap) {
  auto mapped = std::make_shared<Mapped>();
  if (mmap) {
    mapped->file = std::make_shared<MappedFile>(path);
    mapped->attach(mapped->file->data(), mapped->file->size(), path);
  } else {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw Error("cannot open value postings file " + path);
    const auto size = static_cast<uint64_t>(in.tellg());
    mapped->buffer.resize(static_cast<size_t>((size + 7) / 8));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(mapped->buffer.data()), static_cast<std::streamsize>(size)))
      throw Error("cannot read value postings file " + path);
    mapped->attach(reinterpret_cast<const uint8_t*>(mapped->buffer.data()), size, path);
  }
  ValuePostings postings;
  postings.mapped_ = std::move(mapped);
  return postings;
}

}  // namespace relmem
