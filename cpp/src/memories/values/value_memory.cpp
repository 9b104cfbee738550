#include "relmem/memories/values/value_memory.hpp"

#include <omp.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "relmem/memories/text/question_spans.hpp"
#include "relmem/memories/text/string_similarity.hpp"
#include "relmem/memories/values/value_channels.hpp"
#include "relmem/memories/values/value_formats.hpp"
#include "relmem/memories/values/value_lexicon.hpp"

namespace relmem {
namespace {

// Columns up to this size are scored value by value; larger ones through a shortlist.
constexpr uint32_t kFullScanValues = 2000;
constexpr int kShortlist = 300;
constexpr size_t kPrefixMatches = 50;
// A learned alias ranks above everything but the literal itself.
constexpr double kAliasScore = 0.995;

// Runs the encoder and the vector search of one query on the calling thread: waking an OpenMP team costs more than
// encoding a few words, and much more on a busy machine (13 ms instead of 0.2 ms per lookup measured on 2 loaded
// cores).
class SingleThreaded {
 public:
  SingleThreaded() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~SingleThreaded() { omp_set_num_threads(previous_); }
  SingleThreaded(const SingleThreaded&) = delete;
  SingleThreaded& operator=(const SingleThreaded&) = delete;

 private:
  int previous_;
};

ValueCandidate make_candidate(const DatabaseValues& d, uint32_t id, const MatchComponents& components, double score,
                              std::string channel) {
  const ColumnValues& column = d.columns[d.column_of[id]];
  return ValueCandidate{d.values[id], score, components, column.table, column.column, std::move(channel)};
}

struct ChannelScore {
  double score = 0;
  std::string channel;
};

// Matches that do not come from spelling: the column's learned alias for the written value and its meaning
// channels, by value id.
std::unordered_map<uint32_t, ChannelScore> channel_scores(const DatabaseValues& d, const ColumnValues& c,
                                                          const PreparedValue& query, const ValueAliases& aliases,
                                                          const std::string& db) {
  std::unordered_map<uint32_t, ChannelScore> out;
  const ValueLexicon& lexicon = ValueLexicon::shared();
  for (auto& m : meaning_matches(d, c, query, lexicon, column_channels(d, c, lexicon)))
    out[m.id] = ChannelScore{m.score, std::move(m.channel)};
  if (const auto alias = aliases.find(db, c.table, c.column, query.text)) {
    const int64_t id = d.find_value(c, alias->stored);
    if (id >= 0) out[static_cast<uint32_t>(id)] = ChannelScore{kAliasScore, "alias"};
  }
  return out;
}

PreparedValue prepare_stored(const DatabaseValues& d, uint32_t id) {
  return prepare_value(d.values[id], d.normalized[id], d.trigrams_of(id));
}

double clip01(double x) { return std::max(0.0, std::min(1.0, x)); }

// Ids in [id_begin, id_end) of values whose compact form starts with `prefix`, in sorted order.
void add_prefix_matches(const DatabaseValues& d, const std::string& prefix, uint32_t id_begin, uint32_t id_end,
                        std::vector<uint32_t>& out) {
  auto it = std::lower_bound(d.sorted_compact.begin(), d.sorted_compact.end(), std::make_pair(prefix, uint32_t{0}));
  for (size_t taken = 0; it != d.sorted_compact.end() && taken < kPrefixMatches; ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    if (it->second < id_begin || it->second >= id_end) continue;
    out.push_back(it->second);
    ++taken;
  }
}

void add_ids(const std::unordered_map<std::string, std::vector<uint32_t>>& map, const std::string& key,
             std::vector<uint32_t>& out) {
  if (key.empty()) return;
  auto it = map.find(key);
  if (it != map.end()) out.insert(out.end(), it->second.begin(), it->second.end());
}

// Values a written text may refer to through its spelling: same key, initials, prefixes, shared trigrams.
std::vector<uint32_t> lexical_candidates(const DatabaseValues& d, const PreparedValue& q, double min_dice,
                                         uint32_t id_begin, uint32_t id_end, int max_trigram_hits) {
  std::vector<uint32_t> out;
  add_ids(d.by_key, q.compact, out);
  add_ids(d.by_key, q.key, out);
  if (q.compact.size() >= 2) {
    add_ids(d.by_initials, q.compact, out);                   // "LA" -> "Los Angeles"
    add_prefix_matches(d, q.compact, id_begin, id_end, out);  // "Fin" -> "Finance"
    for (size_t length = 1; length < q.compact.size(); ++length) add_ids(d.by_key, q.compact.substr(0, length), out);
  }
  if (q.tokens.size() >= 2) {  // "Los Angeles" -> "LA"
    add_ids(d.by_key, initials_text(q.tokens, false), out);
    add_ids(d.by_key, initials_text(q.tokens, true), out);
  }

  std::unordered_map<uint32_t, uint32_t> shared;
  for (uint32_t gram : q.trigrams) {
    auto it = d.postings.find(gram);
    if (it == d.postings.end()) continue;
    auto from = std::lower_bound(it->second.begin(), it->second.end(), id_begin);
    for (; from != it->second.end() && *from < id_end; ++from) ++shared[*from];
  }
  std::vector<std::pair<double, uint32_t>> by_dice;
  for (const auto& [id, count] : shared) {
    const size_t size = d.trigram_offsets[id + 1] - d.trigram_offsets[id];
    const double dice = 2.0 * count / static_cast<double>(size + q.trigrams.size());
    if (dice >= min_dice) by_dice.emplace_back(dice, id);
  }
  const size_t keep = std::min(by_dice.size(), static_cast<size_t>(max_trigram_hits));
  std::partial_sort(by_dice.begin(), by_dice.begin() + keep, by_dice.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (size_t i = 0; i < keep; ++i) out.push_back(by_dice[i].second);

  out.erase(std::remove_if(out.begin(), out.end(), [&](uint32_t id) { return id < id_begin || id >= id_end; }),
            out.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// A value the column holds, to read its date or number format off: its most frequent text value, else its range.
std::string format_sample(const DatabaseValues& d, const ColumnValues& c) {
  if (c.count > 0) return d.values[c.first];
  return std::holds_alternative<std::monostate>(c.min) ? std::string() : value_to_string(c.min);
}

// Formats never lose to spelling: "March 3, 2010" and '2010-03-03' share no trigram, yet mean one day.
constexpr double kFormatScore = 0.96;

// The initials of a span of two or more words that WordNet knows as one term ("computer science": "cs"), with and
// without its function words; none for other spans.
std::vector<std::string> term_initials(const PreparedValue& written) {
  if (written.tokens.size() < 2 || !ValueLexicon::shared().knows(written.compact)) return {};
  return {initials_text(written.tokens, false), initials_text(written.tokens, true)};
}

// Initials and prefixes link a question span to a stored value when the span reads as a name (is_proper_name:
// "Los Angeles" / 'LA', "NYC" / 'New York City'), or in three cases that hold for any span (abbreviates_anyway):
// the initials of a term WordNet knows ("computer science" / 'CS'), initials where the stored "&" writes the
// span's "and" ("research and development" / 'R&D'), and a stored word that is most of the span's first word, its
// stem ("Asian countries" / 'Asia', "successful" / 'Success'; not "start" / 'STA'). Other spans are ordinary words,
// whose initials and prefixes match stored codes by chance: before this rule, 9 of the 434 such links of 1,347 Spider
// train questions named a gold value ("people attend" / 'PA', "math" / 'Mathias').
// `term_initials`: term_initials(written), computed once per span.
bool abbreviates_anyway(const PreparedValue& written, const std::vector<std::string>& term_initials,
                        const PreparedValue& stored) {
  if (written.tokens.empty()) return false;
  if (std::find(term_initials.begin(), term_initials.end(), stored.compact) != term_initials.end()) return true;
  const bool ampersand = written.tokens.size() >= 2 && stored.text.find('&') != std::string::npos &&
                         std::find(written.tokens.begin(), written.tokens.end(), "and") != written.tokens.end();
  const std::string& word = written.tokens[0];
  const std::string& value = stored.compact;
  const bool stem = stored.tokens.size() == 1 && value.size() >= 4 && value.size() <= word.size() &&
                    10 * value.size() >= 6 * word.size() && word.compare(0, value.size(), value) == 0;
  return ampersand || stem;
}

}  // namespace

ValueMemory::ValueMemory(std::shared_ptr<const Encoder> encoder, ValueMemoryOptions options)
    : encoder_(std::move(encoder)), options_(options) {
  if (!encoder_) throw Error("the value memory needs an encoder");
  if (options_.max_values_per_column < 1) throw Error("max_values_per_column must be at least 1");
  if (options_.max_vectors_per_column < 0) throw Error("max_vectors_per_column must not be negative");
}

ValueMemory ValueMemory::build(const Catalog& catalog, std::shared_ptr<const Encoder> encoder,
                               const ValueMemoryOptions& options, const BuildProgress& progress) {
  ValueMemory memory(std::move(encoder), options);
  const auto names = catalog.databases();
  for (size_t i = 0; i < names.size(); ++i) {
    memory.add_database(catalog, names[i]);
    if (progress) progress(names[i], i + 1, names.size());
  }
  return memory;
}

void ValueMemory::add_database(const Catalog& catalog, const std::string& db) {
  std::unique_ptr<DatabaseValues> values = read_database_values(catalog, db, options_);
  encode_database_values(*values, *encoder_, options_);
  std::unique_lock lock(*lock_);
  databases_[db] = std::move(values);
}

bool ValueMemory::remove_database(const std::string& db) {
  std::unique_lock lock(*lock_);
  return databases_.erase(db) > 0;
}

RefreshReport ValueMemory::refresh(const Catalog& catalog, const BuildProgress& progress) {
  std::map<std::string, DatabaseFile> held;
  for (const auto& [name, values] : snapshot()) held[name] = {values->path, values->stamp};
  RefreshReport report;
  const std::vector<std::string> rebuild = plan_refresh(catalog, held, report);
  for (const auto& name : report.removed) remove_database(name);
  for (size_t i = 0; i < rebuild.size(); ++i) {
    add_database(catalog, rebuild[i]);
    if (progress) progress(rebuild[i], i + 1, rebuild.size());
  }
  return report;
}

ValueMemory::Databases ValueMemory::snapshot() const {
  std::shared_lock lock(*lock_);
  return databases_;
}

std::vector<std::string> ValueMemory::databases() const {
  std::shared_lock lock(*lock_);
  std::vector<std::string> names;
  for (const auto& [name, _] : databases_) names.push_back(name);
  return names;
}

bool ValueMemory::contains(const std::string& db) const {
  std::shared_lock lock(*lock_);
  return databases_.count(db) > 0;
}

std::shared_ptr<const DatabaseValues> ValueMemory::find_database(const std::string& db) const {
  std::shared_lock lock(*lock_);
  auto it = databases_.find(db);
  return it == databases_.end() ? nullptr : it->second;
}

std::shared_ptr<const DatabaseValues> ValueMemory::database(const std::string& db) const {
  auto values = find_database(db);
  if (!values) throw Error("database '" + db + "' is not in the value memory");
  return values;
}

const ColumnValues* ValueMemory::column(const std::string& db, const std::string& table,
                                        const std::string& column) const {
  const auto values = find_database(db);
  return values ? values->find_column(table, column) : nullptr;
}

MemoryUsage ValueMemory::memory_usage() const {
  MemoryUsage usage;
  for (const auto& [_, d] : snapshot()) {
    usage.string_bytes += d->string_bytes();
    usage.lexical_bytes += d->lexical_bytes();
    usage.vector_bytes += d->vector_bytes();
  }
  return usage;
}

std::vector<ValueCandidate> ValueMemory::lookup(const std::string& db, const std::string& table,
                                                const std::string& column, const std::string& value, int k) const {
  const auto held = database(db);
  const DatabaseValues& d = *held;
  const ColumnValues* c = d.find_column(table, column);
  if (!c) throw Error("unknown column " + table + "." + column + " in database '" + db + "'");
  if (k <= 0) return {};
  // A date or number written in another format than the column's: its stored form, stored or not.
  const auto formatted = written_as_stored(value, format_sample(d, *c));
  const std::string format_channel = formatted && parse_written_date(value) ? "date" : "number";
  const int64_t formatted_id = formatted && c->count > 0 ? d.find_value(*c, *formatted) : -1;
  if (c->count == 0) {
    if (!formatted) return {};
    return {ValueCandidate{*formatted, kFormatScore, MatchComponents{}, c->table, c->column, format_channel}};
  }
  const PreparedValue query = prepare_value(value);
  auto channels = channel_scores(d, *c, query, aliases_, db);
  if (formatted_id >= 0) channels[static_cast<uint32_t>(formatted_id)] = ChannelScore{kFormatScore, format_channel};

  std::unordered_map<uint32_t, double> semantic;
  if (c->vectors > 0 && d.vectors) {
    SingleThreaded serial;
    const RowMatrix q = encoder_->encode({value});
    const SearchResult found =
        d.vectors->search_range(q.data(), 1, static_cast<int>(c->vectors), c->first, c->first + c->vectors);
    for (Eigen::Index j = 0; j < found.ids.cols(); ++j)
      if (found.ids(0, j) >= 0) semantic[static_cast<uint32_t>(found.ids(0, j))] = clip01(found.scores(0, j));
  }

  std::vector<uint32_t> ids;
  if (c->count <= kFullScanValues) {
    for (uint32_t i = 0; i < c->count; ++i) ids.push_back(c->first + i);
  } else {
    ids = lexical_candidates(d, query, 0.0, c->first, c->first + c->count, kShortlist);
    std::vector<std::pair<double, uint32_t>> by_semantic;
    for (const auto& [id, score] : semantic) by_semantic.emplace_back(score, id);
    const size_t keep = std::min(by_semantic.size(), static_cast<size_t>(kShortlist));
    std::partial_sort(by_semantic.begin(), by_semantic.begin() + keep, by_semantic.end(), std::greater<>());
    for (size_t i = 0; i < keep; ++i) ids.push_back(by_semantic[i].second);
    for (const auto& [id, _] : channels) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }

  std::vector<ValueCandidate> out;
  std::vector<std::pair<double, uint32_t>> scored;
  std::vector<MatchComponents> components(ids.size());
  std::vector<std::string> why(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    components[i] = compare_values(query, prepare_stored(d, ids[i]));
    auto it = semantic.find(ids[i]);
    if (it != semantic.end()) components[i].semantic = it->second;
    double score = fuse(components[i], weights_);
    why[i] = evidence_name(components[i], weights_);
    auto channel = channels.find(ids[i]);
    if (channel != channels.end()) {
      const double meaning = channel->second.score + kMeaningTieBreak * std::max(0.0, components[i].semantic);
      if (meaning > score) {
        score = std::min(meaning, weights_.normalized - 0.01);
        why[i] = channel->second.channel;
      }
    }
    scored.emplace_back(score, static_cast<uint32_t>(i));
  }
  const size_t keep = std::min(scored.size(), static_cast<size_t>(k));
  // Ties go to the more frequent value: ids are in frequency order within a column.
  std::partial_sort(scored.begin(), scored.begin() + keep, scored.end(), [&](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && ids[a.second] < ids[b.second]);
  });
  for (size_t i = 0; i < keep; ++i)
    out.push_back(make_candidate(d, ids[scored[i].second], components[scored[i].second], scored[i].first,
                                 why[scored[i].second]));
  return out;
}

std::vector<ValueLink> ValueMemory::link(const std::string& db, const std::string& question,
                                         const LinkOptions& options) const {
  return link_all({db}, question, options)[0];
}

std::vector<std::vector<ValueLink>> ValueMemory::link_all(const std::vector<std::string>& dbs,
                                                          const std::string& question,
                                                          const LinkOptions& options) const {
  std::vector<std::shared_ptr<const DatabaseValues>> found;
  bool any_vectors = false;
  for (const auto& db : dbs) {
    found.push_back(database(db));
    any_vectors |= found.back()->vectors && found.back()->vectors->size() > 0;
  }
  const auto spans = question_spans(question, std::max(1, options.max_span_words));
  std::vector<std::string> texts;
  for (const auto& span : spans) texts.push_back(question.substr(span.start, span.end - span.start));
  // The encoder's cosine counts at most weights_.semantic: with a higher min_score it can never make a link, so the
  // spans are not encoded (most of a link's time) and candidates come from the lexical channels alone.
  const bool semantic_can_link = options.min_score <= weights_.semantic;
  RowMatrix span_vectors;
  if (semantic_can_link && any_vectors && !texts.empty() && options.k > 0) {
    SingleThreaded serial;
    span_vectors = encoder_->encode(texts);
  }
  std::vector<bool> named;
  for (size_t s = 0; s < spans.size(); ++s)
    named.push_back(is_proper_name(question, spans[s]));
  std::vector<std::vector<ValueLink>> out;
  for (const auto& d : found) out.push_back(link_spans(*d, spans, texts, span_vectors, named, options));
  return out;
}

std::vector<ValueLink> ValueMemory::link_spans(const DatabaseValues& d, const std::vector<QuestionSpan>& spans,
                                               const std::vector<std::string>& texts, const RowMatrix& span_vectors,
                                               const std::vector<bool>& named,
                                               const LinkOptions& options) const {
  if (spans.empty() || d.values.empty() || options.k <= 0) return {};
  const bool encoded = span_vectors.rows() == static_cast<Eigen::Index>(spans.size());
  SearchResult neighbours;
  if (encoded && d.vectors && d.vectors->size() > 0) {
    SingleThreaded serial;
    neighbours = d.vectors->search(span_vectors.data(), span_vectors.rows(), std::max(1, options.candidates_per_span));
  }

  const ValueLexicon& lexicon = ValueLexicon::shared();
  // The text columns that concepts apply to, with their channels, found on the first span that names a concept.
  std::vector<std::pair<const ColumnValues*, ColumnChannels>> text_columns;
  bool text_columns_found = false;
  std::unordered_map<uint32_t, ValueLink> best;  // value id -> its best span
  for (size_t s = 0; s < spans.size(); ++s) {
    const PreparedValue query = prepare_value(texts[s]);
    if (query.compact.size() < 2) continue;
    std::vector<uint32_t> ids = lexical_candidates(d, query, 0.5, 0, static_cast<uint32_t>(d.values.size()), 50);
    std::unordered_map<uint32_t, double> semantic;
    if (neighbours.ids.rows() > 0) {
      for (Eigen::Index j = 0; j < neighbours.ids.cols(); ++j) {
        const int64_t id = neighbours.ids(static_cast<Eigen::Index>(s), j);
        if (id < 0) continue;
        semantic[static_cast<uint32_t>(id)] = clip01(neighbours.scores(static_cast<Eigen::Index>(s), j));
        ids.push_back(static_cast<uint32_t>(id));
      }
    }
    // Meaning: the span's concepts ("United States" / 'usa', "women" / 'F') and learned aliases. Not WordNet
    // synonyms, which a lookup reads: most question words are no value, and their synonyms match stored titles and
    // names by chance ("tracks" / 'Chase', "matches" / 'Peer': 3 of 197 such links on Spider train questions named a
    // gold value). A span of three letters or fewer must read as a name ("UK", "CA"): "id" is not Idaho.
    std::unordered_map<uint32_t, ChannelScore> meaning;
    if (named[s] || query.compact.size() > 3) {
      const bool concept = !lexicon.concepts_of(query.compact).empty() ||
                           (!query.key.empty() && !lexicon.concepts_of(query.key).empty());
      if (concept && !text_columns_found) {
        for (const ColumnValues& column : d.columns) {
          if (column.kind != ColumnKind::Text || column.count == 0) continue;
          ColumnChannels channels = column_channels(d, column, lexicon);
          channels.synonyms = false;
          if (!channels.concepts.empty()) text_columns.emplace_back(&column, std::move(channels));
        }
        text_columns_found = true;
      }
      const auto keep = [&](uint32_t id, ChannelScore found) {
        auto [slot, inserted] = meaning.emplace(id, found);
        if (!inserted && found.score > slot->second.score) slot->second = std::move(found);
        ids.push_back(id);
      };
      if (concept)
        for (const auto& [column, channels] : text_columns)
          for (auto& m : meaning_matches(d, *column, query, lexicon, channels))
            keep(m.id, ChannelScore{m.score, std::move(m.channel)});
      for (const ValueAlias& alias : aliases_.find_in_database(d.name, texts[s])) {
        const ColumnValues* column = d.find_column(alias.table, alias.column);
        const int64_t id = column ? d.find_value(*column, alias.stored) : -1;
        if (id >= 0) keep(static_cast<uint32_t>(id), ChannelScore{kAliasScore, "alias"});
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    const std::vector<std::string> initials = named[s] ? std::vector<std::string>{} : term_initials(query);
    for (uint32_t id : ids) {
      const PreparedValue stored_value = prepare_stored(d, id);
      MatchComponents components = compare_values(query, stored_value);
      if (!named[s] && !abbreviates_anyway(query, initials, stored_value)) components.abbreviation = 0;
      auto it = semantic.find(id);
      if (it != semantic.end()) {
        components.semantic = it->second;
      } else if (encoded && d.vectors && d.vectors->contains(id)) {
        const auto stored = d.vectors->reconstruct(id);
        double dot = 0;
        for (size_t j = 0; j < stored.size(); ++j) dot += stored[j] * span_vectors(static_cast<Eigen::Index>(s), j);
        components.semantic = clip01(dot);
      }
      double score = fuse(components, weights_);
      std::string channel = evidence_name(components, weights_);
      const auto meant = meaning.find(id);
      if (meant != meaning.end() && meant->second.score > score) {
        score = std::min(meant->second.score, weights_.normalized - 0.01);
        channel = meant->second.channel;
      }
      if (score < options.min_score) continue;
      ValueLink link{texts[s], spans[s].start, spans[s].end, make_candidate(d, id, components, score, channel)};
      auto [slot, inserted] = best.emplace(id, link);
      const bool better = score > slot->second.match.score ||
                          (score == slot->second.match.score && link.span.size() > slot->second.span.size());
      if (!inserted && better) slot->second = std::move(link);
    }
  }
  std::vector<std::pair<uint32_t, ValueLink>> links(best.begin(), best.end());
  std::sort(links.begin(), links.end(), [](const auto& a, const auto& b) {
    if (a.second.match.score != b.second.match.score) return a.second.match.score > b.second.match.score;
    if (a.second.span.size() != b.second.span.size()) return a.second.span.size() > b.second.span.size();
    return a.first < b.first;
  });
  std::vector<ValueLink> out;
  for (size_t i = 0; i < links.size() && static_cast<int>(i) < options.k; ++i)
    out.push_back(std::move(links[i].second));
  return out;
}

}  // namespace relmem
