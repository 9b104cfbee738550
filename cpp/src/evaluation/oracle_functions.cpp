// How the oracle filler answers SQL function calls (llm_map, llm_qa, llm_match), whose requests name no column: it
// finds the rows the input identifies (by the columns an object input names, else values of a table's key columns
// found in the input's text), picks the
// dropped column or relation the instruction is about (words of its name and meaning, or one of its values named
// in the instruction), and answers from the original row: the value itself, or for a yes/no instruction whether
// the value is the one named (or passes the comparison stated). Anything else it leaves unanswered.
#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <tuple>

#include "../common/sqlite_statement.hpp"
#include "oracle_answers.hpp"
#include "relmem/hybrid/hybrid_schema.hpp"
#include "../hybrid/text.hpp"

namespace relmem::evaluation {

using hybrid::parse_column_reference;
using hybrid::text_of;

namespace {

using nlohmann::json;

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char raw : text + " ") {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(raw)));
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += c;
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  for (auto& w : out) {
    if (w == "colour") w = "color";
    if (w.size() > 3 && w.back() == 's' && w[w.size() - 2] != 's') w.pop_back();
  }
  return out;
}

// Splits identifiers: "eye_colour_id" -> eye, color, id; "homeTeamGoal" -> home, team, goal.
std::vector<std::string> name_words(const std::string& name) {
  std::string spaced;
  for (size_t i = 0; i < name.size(); ++i) {
    if (i && std::isupper(static_cast<unsigned char>(name[i])) && std::islower(static_cast<unsigned char>(name[i - 1])))
      spaced += ' ';
    spaced += name[i] == '_' ? ' ' : name[i];
  }
  return words(spaced);
}

bool contains_phrase(const std::string& text, const std::string& phrase) {
  const std::string p = normalize_text(phrase);
  return !p.empty() && (" " + normalize_text(text) + " ").find(" " + p + " ") != std::string::npos;
}

const std::set<std::string>& stopwords() {
  static const std::set<std::string> words = {
      "the", "a", "an", "is", "of", "for", "this", "that", "provide", "what", "which", "does", "doe", "doee", "do",
      "has", "have", "in", "on", "at", "based", "to", "and", "or", "it", "its", "be", "was", "are", "id", "give",
      "each", "who", "how", "many", "much", "with", "by", "from", "their", "his", "her", "int", "float"};
  return words;
}

// One place an instruction may be about: a dropped column of `table` or a relation owned by it.
using Target = OracleTarget;

struct Identified {
  std::string table;
  std::vector<int64_t> rows;
  size_t covered = 0;  // words of the input their key values cover
  int keys = 0;        // key columns found in the input
};

// rowid -> input words its key values cover, and how many key columns matched: "Thanos (Infinity Gauntlet)" is
// that hero, not "Thanos", even though Thanos matches two key columns with the one word.
using KeyMatches = std::map<int64_t, std::pair<std::set<size_t>, int>>;

struct KeyOccurrence {
  int64_t row;
  size_t key;             // index into the key columns
  std::set<size_t> words;  // the span of input words holding the value
};

// Each place a key value of `table` appears in the tokens (as whole words).
std::vector<KeyOccurrence> key_occurrences(const OracleDatabase& db, const std::string& table,
                                           const std::vector<std::string>& keys,
                                           const std::vector<std::string>& tokens) {
  constexpr size_t kMaxSpan = 12;  // words in one key value
  std::vector<KeyOccurrence> out;
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::string key = db.column_name(table, keys[k]);
    if (key.empty()) continue;
    const auto& index = db.value_index(table, key);
    for (size_t b = 0; b < tokens.size(); ++b) {
      std::string span;
      for (size_t e = b; e < tokens.size() && e < b + kMaxSpan; ++e) {
        span += (span.empty() ? "" : " ") + tokens[e];
        const auto hit = index.find(span);
        const bool whole_input = b == 0 && e + 1 == tokens.size();  // short values only as the whole input
        if (hit == index.end() || (span.size() < 2 && !whole_input)) continue;
        std::set<size_t> words;
        for (size_t w = b; w <= e; ++w) words.insert(w);
        for (int64_t row : hit->second) out.push_back({row, k, words});
      }
    }
  }
  return out;
}

// Rows of `table` whose key values appear in the tokens, with the words they cover and the key columns matched.
KeyMatches match_keys(const OracleDatabase& db, const std::string& table, const std::vector<std::string>& keys,
                      const std::vector<std::string>& tokens) {
  KeyMatches matched;
  std::map<int64_t, std::set<size_t>> keys_of_row;
  for (const auto& occurrence : key_occurrences(db, table, keys, tokens)) {
    matched[occurrence.row].first.insert(occurrence.words.begin(), occurrence.words.end());
    keys_of_row[occurrence.row].insert(occurrence.key);
  }
  for (auto& [row, m] : matched) m.second = static_cast<int>(keys_of_row[row].size());
  return matched;
}

const std::vector<std::string>* keys_of(const OracleDatabase& db, const std::string& table) {
  for (const auto& [name, keys] : db.source().keys)
    if (to_lower(db.table_name(name)) == to_lower(table)) return &keys;
  return nullptr;
}

// Rows of `table` whose key columns all reference rows the text names, each with words of its own, narrowed to those
// whose other values the text holds most of: "Home Team: X, Away Team: Y, Date: D" names one match by its two teams
// (keys referencing Team, named by team_long_name) and its date.
std::optional<Identified> identify_by_references(const OracleDatabase& db, const std::string& table,
                                                 const std::vector<std::string>& keys,
                                                 const std::vector<std::string>& tokens, const std::string& text) {
  constexpr size_t kMaxCombinations = 64;
  struct Named {
    json id;
    std::set<size_t> words;  // the input words that name the referenced row
  };
  std::vector<std::pair<std::string, std::vector<Named>>> named;  // key column -> the referenced rows the text names
  size_t combinations = 1;
  for (const auto& key_in : keys) {
    const std::string column = db.column_name(table, key_in);
    const auto fk = column.empty() ? std::nullopt : db.foreign_key(table, column);
    const std::string referenced = fk ? db.table_name(fk->table) : "";
    const auto* referenced_keys = referenced.empty() ? nullptr : keys_of(db, referenced);
    if (!referenced_keys || to_lower(referenced) == to_lower(table)) return std::nullopt;
    std::vector<Named> rows;  // one per place a referenced row is named: a name written twice names two rows
    for (const auto& occurrence : key_occurrences(db, referenced, *referenced_keys, tokens)) {
      Named one{db.value(referenced, occurrence.row, db.column_name(referenced, fk->column)), occurrence.words};
      if (std::none_of(rows.begin(), rows.end(),
                       [&](const Named& n) { return n.id == one.id && n.words == one.words; }))
        rows.push_back(std::move(one));
    }
    combinations *= rows.size();
    if (rows.empty() || combinations > kMaxCombinations) return std::nullopt;
    named.emplace_back(column, std::move(rows));
  }
  std::vector<int64_t> candidates;
  size_t covered = 0;
  for (size_t n = 0; n < combinations; ++n) {
    json key = json::object();
    std::set<size_t> words;
    bool disjoint = true;  // each key named by words of its own: one team's name does not name both teams
    for (size_t i = 0, rest = n; i < named.size(); rest /= named[i].second.size(), ++i) {
      const Named& choice = named[i].second[rest % named[i].second.size()];
      key[named[i].first] = choice.id;
      for (size_t w : choice.words) disjoint = words.insert(w).second && disjoint;
    }
    if (!disjoint) continue;
    const auto rows = db.rows_with(table, key);
    if (rows.empty() || words.size() < covered) continue;
    if (words.size() > covered) candidates.clear(), covered = words.size();
    candidates.insert(candidates.end(), rows.begin(), rows.end());
  }
  if (candidates.empty()) return std::nullopt;
  std::map<int, std::vector<int64_t>> by_values_held;  // how many of a row's other texts the input holds -> rows
  for (int64_t row : candidates) {
    int held = 0;
    for (const auto& value : db.row(table, row))
      held += value.is_string() && value.get_ref<const std::string&>().size() >= 4 &&
              value.get_ref<const std::string&>().size() < 200 && contains_phrase(text, value.get<std::string>());
    by_values_held[held].push_back(row);
  }
  return Identified{table, by_values_held.rbegin()->second, covered + 1, static_cast<int>(keys.size())};
}

// Rows whose key values appear in the input's text (as whole words), or whose keys reference rows named there,
// best-matching table first.
std::vector<Identified> identify(const OracleDatabase& db, const std::string& text) {
  const std::string normalized = normalize_text(text);
  std::vector<std::string> tokens;
  for (size_t b = 0, e; b < normalized.size(); b = e + 1) {
    e = normalized.find(' ', b);
    if (e == std::string::npos) e = normalized.size();
    tokens.push_back(normalized.substr(b, e - b));
  }
  std::vector<Identified> out;
  for (const auto& [table_in, keys] : db.source().keys) {
    const std::string table = db.table_name(table_in);
    if (table.empty()) continue;
    const KeyMatches matched = match_keys(db, table, keys, tokens);
    std::pair<size_t, int> best{0, 0};
    for (const auto& [_, m] : matched) best = std::max(best, std::make_pair(m.first.size(), m.second));
    if (best.first == 0) {
      if (auto referenced = identify_by_references(db, table, keys, tokens, text))
        out.push_back(std::move(*referenced));
      continue;
    }
    Identified found{table, {}, best.first, best.second};
    for (const auto& [rowid, m] : matched)
      if (std::make_pair(m.first.size(), m.second) == best) found.rows.push_back(rowid);
    out.push_back(std::move(found));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.covered, a.keys) > std::tie(b.covered, b.keys);
  });
  return out;
}

// Rows an input that names its columns ({"superhero_name": "James Bond"}) identifies: in each table with keys that
// has every named column, the rows holding exactly those values (the lookup that fills virtual columns). Empty
// when no table has the columns or no row the values.
std::vector<Identified> identify_named(const OracleDatabase& db, const json& input) {
  std::vector<Identified> out;
  for (const auto& [table_in, _] : db.source().keys) {
    const std::string table = db.table_name(table_in);
    if (table.empty()) continue;
    auto rows = db.rows_with(table, input);
    if (!rows.empty()) out.push_back({table, std::move(rows), input.size(), static_cast<int>(input.size())});
  }
  return out;
}

std::vector<Target> targets_of(const OracleDatabase& db, const std::string& identified) {
  std::vector<Target> out;
  for (const auto& [name, meaning] : db.source().dropped) {
    const auto ref = parse_column_reference(name);
    if (!ref) {  // a relation: owned by the identified table when it references it
      const std::string relation = db.table_name(name);
      if (relation.empty()) continue;
      for (const auto& column : db.columns(relation)) {
        const auto fk = db.foreign_key(relation, column);
        if (fk && to_lower(fk->table) == to_lower(identified)) out.push_back({relation, "", relation, meaning, "", "", ""});
      }
      continue;
    }
    const std::string table = db.table_name(ref->first);
    const std::string column = table.empty() ? "" : db.column_name(table, ref->second);
    if (column.empty()) continue;
    if (to_lower(table) == to_lower(identified)) {
      out.push_back({table, column, "", meaning, "", "", ""});
      continue;
    }
    for (const auto& own : db.columns(table)) {  // one foreign-key hop: table.own -> identified
      const auto fk = db.foreign_key(table, own);
      if (fk && to_lower(fk->table) == to_lower(identified)) {
        out.push_back({table, column, "", meaning, identified, own, fk->column});
        break;
      }
    }
  }
  return out;
}

// The labels a target's values are stated in (its foreign key's labels, a relation's targets, or its own values).
std::vector<std::string> target_domain(const OracleDatabase& db, const Target& target) {
  if (!target.relation.empty()) {
    for (const auto& column : db.columns(target.relation)) {
      const auto fk = db.foreign_key(target.relation, column);
      if (fk && to_lower(fk->table) != to_lower(target.via.empty() ? "" : target.via)) {
        const std::string label = db.first_text_column(fk->table);
        if (!label.empty() && !db.source().keys.count(fk->table)) return db.distinct_texts(fk->table, label);
      }
    }
    return {};
  }
  if (const auto fk = db.foreign_key(target.table, target.column)) {
    const std::string label = db.first_text_column(fk->table);
    return label.empty() ? std::vector<std::string>{} : db.distinct_texts(fk->table, label);
  }
  return db.distinct_texts(target.table, target.column);
}

// Whether every word of a value of two or more words is in the text, in any order ("funded directly": the value
// "Directly funded").
bool contains_words(const std::string& text, const std::string& value) {
  const auto wanted = words(value);
  const auto have = words(text);
  return wanted.size() >= 2 && std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
    return std::find(have.begin(), have.end(), w) != have.end();
  });
}

// The longest value the instruction names, as a phrase or word by word.
std::string longest_mentioned(const std::string& instruction, const std::vector<std::string>& domain) {
  std::string best;
  for (const auto& value : domain)
    if (value.size() > best.size() && (contains_phrase(instruction, value) || contains_words(instruction, value)))
      best = value;
  return best;
}

bool same_word(const std::string& a, const std::string& b) {
  return a == b || (a.size() >= 3 && b.size() >= 3 && (a.rfind(b, 0) == 0 || b.rfind(a, 0) == 0));
}

// How well an instruction's words name a target: 2 per word of its name ("county name": County Name), 1 per word
// only its meaning has ("street address": the city of the school's street address), less 0.1 per word of its name
// the instruction lacks.
double word_score(const std::string& instruction, const Target& target) {
  std::set<std::string> wanted;
  for (const auto& w : words(instruction))
    if (!stopwords().count(w)) wanted.insert(w);
  std::set<std::string> named, meant;
  for (const auto& w : name_words(target.column.empty() ? target.relation : target.column))
    if (!stopwords().count(w)) named.insert(w);
  for (const auto& w : words(target.meaning))
    if (!stopwords().count(w)) meant.insert(w);
  auto any_same = [](const std::string& w, const std::set<std::string>& set) {
    return std::any_of(set.begin(), set.end(), [&](const std::string& h) { return same_word(w, h); });
  };
  double score = 0;
  for (const auto& w : wanted) score += any_same(w, named) ? 2.0 : any_same(w, meant) ? 1.0 : 0.0;
  if (score == 0) return 0;
  for (const auto& w : named)  // of two columns the words name, the one they name whole: City, not MailCity
    if (!any_same(w, wanted)) score -= 0.1;
  return score;
}

// The target's true value(s) for the first identified row, as labels; nullopt when the rows of the target's table
// that reference the row disagree (a team's matches have many scores).
std::optional<json> truth_for(const OracleDatabase& db, const Target& target, const Identified& found) {
  const int64_t row = found.rows.front();
  if (!target.relation.empty()) {
    json key = json::object();
    for (const auto& k : db.source().keys.at(found.table)) {
      const std::string column = db.column_name(found.table, k);
      if (!column.empty()) key[column] = db.value(found.table, row, column);
    }
    json spec = json::object();
    for (const auto& column : db.columns(target.relation)) {
      const auto fk = db.foreign_key(target.relation, column);
      if (fk && to_lower(fk->table) != to_lower(found.table))
        spec["allowed_from"] = fk->table + "." + db.first_text_column(fk->table);
    }
    return true_list(db, target.relation, found.table, key, spec);
  }
  json value;
  if (target.via.empty()) {
    value = db.value(target.table, row, target.column);
  } else {
    const json id = db.value(found.table, row, target.referenced_column);
    const auto values = db.lookup_distinct(target.table, target.via_column, id, target.column, 2);
    if (values.size() > 1) return std::nullopt;
    value = values.empty() ? json() : values.front();
  }
  if (const auto fk = db.foreign_key(target.table, target.column); fk && !value.is_null()) {
    const std::string label = db.first_text_column(fk->table);
    if (!label.empty()) value = db.lookup(fk->table, fk->column, value, label);
  }
  return value;
}

std::optional<double> number_of(const json& value, bool year_of_date) {
  if (value.is_number()) return value.get<double>();
  if (!value.is_string()) return std::nullopt;
  const std::string text = value.get<std::string>();
  try {
    if (year_of_date && text.size() >= 4) return std::stod(text.substr(0, 4));
    size_t used = 0;
    const double number = std::stod(text, &used);
    return used ? std::optional<double>(number) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

// A comparison stated in a yes/no instruction ("taller than 180", "between 1990 and 1995", "in October 1970").
std::optional<bool> compare(const std::string& instruction, const json& truth) {
  static const std::vector<std::string> months = {"january", "february", "march",     "april",   "may",      "june",
                                                  "july",    "august",   "september", "october", "november", "december"};
  static const std::regex in_month("(january|february|march|april|may|june|july|august|september|october|november|"
                                   "december)\\s+(\\d{4})");
  static const std::regex between("between\\s+(\\d+(?:\\.\\d+)?)\\s+and\\s+(\\d+(?:\\.\\d+)?)");
  static const std::regex above("(greater|more|taller|older|higher|larger|over|above|after)\\s+(than\\s+)?(\\d+(?:\\.\\d+)?)");
  static const std::regex below("(less|fewer|shorter|younger|lower|smaller|under|below|before)\\s+(than\\s+)?(\\d+(?:\\.\\d+)?)");
  static const std::regex on_day("\\bon\\s+(?:(\\d{4})-)?(\\d{1,2})-(\\d{1,2})\\b");
  const std::string text = to_lower(instruction);
  const json value = truth.is_array() ? json(static_cast<int64_t>(truth.size())) : truth;
  std::smatch m;
  if (std::regex_search(text, m, on_day) && value.is_string()) {  // "on 07-16", "on 2015-11-29": a date's day
    const std::string t = value.get<std::string>();
    char day[6];
    std::snprintf(day, sizeof day, "%02d-%02d", std::stoi(m[2].str()), std::stoi(m[3].str()));
    return t.size() >= 10 && t.substr(5, 5) == day && (!m[1].matched || t.substr(0, 4) == m[1].str());
  }
  if (std::regex_search(text, m, in_month) && value.is_string()) {
    const std::string t = value.get<std::string>();
    const auto month = std::find(months.begin(), months.end(), m[1].str()) - months.begin() + 1;
    char digits[3];
    std::snprintf(digits, sizeof digits, "%02d", static_cast<int>(month));
    return t.size() >= 7 && t.substr(0, 4) == m[2].str() && t.substr(5, 2) == digits;
  }
  if (std::regex_search(text, m, between)) {
    const bool years = m[1].str().size() == 4 && value.is_string();
    const auto v = number_of(value, years);
    if (!v) return std::nullopt;
    return *v >= std::stod(m[1].str()) && *v <= std::stod(m[2].str());
  }
  if (std::regex_search(text, m, above)) {
    const bool years = m[3].str().size() == 4 && value.is_string();
    const auto v = number_of(value, years);
    if (!v) return std::nullopt;
    return *v > std::stod(m[3].str());
  }
  if (std::regex_search(text, m, below)) {
    const bool years = m[3].str().size() == 4 && value.is_string();
    const auto v = number_of(value, years);
    if (!v) return std::nullopt;
    return *v < std::stod(m[3].str());
  }
  return std::nullopt;
}

const std::set<std::string>& flag_words(bool yes) {
  static const std::set<std::string> yes_words = {"1", "y", "yes", "true", "t"};
  static const std::set<std::string> no_words = {"0", "n", "no", "false", "f"};
  return yes ? yes_words : no_words;
}

// Whether a target holds a flag: 1/0, Y/N, yes/no or true/false in every row ("Is it a magnet school?").
bool is_flag(const OracleDatabase& db, const Target& target) {
  if (!target.relation.empty()) return false;
  const auto domain = target_domain(db, target);
  return !domain.empty() && std::all_of(domain.begin(), domain.end(), [](const std::string& value) {
    return flag_words(true).count(to_lower(value)) || flag_words(false).count(to_lower(value));
  });
}

// A flag's value as a yes/no answer; nullopt when the truth is no flag.
std::optional<bool> flag_of(const json& truth) {
  if (truth.is_boolean()) return truth.get<bool>();
  const std::string t = to_lower(text_of(truth));
  if (flag_words(true).count(t)) return true;
  if (flag_words(false).count(t)) return false;
  return std::nullopt;
}

bool is_yes_no(const std::string& instruction) {
  static const std::set<std::string> openers = {"is", "doe", "does", "doee", "doees", "do", "was", "were", "are",
                                                "has", "have", "did", "can"};
  const auto w = words(instruction);
  return !w.empty() && openers.count(w[0]);
}

// Whether the answer's allowed values are the target's labels (options='race::race' points at race_id).
bool domain_matches(const OracleDatabase& db, const Target& target, const json& spec) {
  if (!spec.contains("allowed")) return false;
  const auto allowed = spec["allowed"].get<std::vector<std::string>>();
  const auto domain = target_domain(db, target);
  size_t shared = 0;
  for (const auto& value : allowed)
    shared += std::find(domain.begin(), domain.end(), value) != domain.end();
  return !allowed.empty() && shared * 2 >= allowed.size();
}

// Whether the instruction asks for a stored column of a table other than the identified one and the target's: it
// names that table with a word the target's name and meaning lack and, with another word, one of its stored
// columns ("Provide the wiki season URL." about a race asks for seasons.url, not for the race's dropped url). The
// filler answers only about dropped columns.
bool asks_stored_column_elsewhere(const OracleDatabase& db, const std::string& instruction,
                                  const std::string& identified, const Target& target) {
  std::set<std::string> skip = {to_lower(identified), to_lower(target.table), to_lower(target.relation)};
  if (const auto fk = target.column.empty() ? std::nullopt : db.foreign_key(target.table, target.column))
    skip.insert(to_lower(fk->table));
  if (!target.relation.empty())
    for (const auto& column : db.columns(target.relation))
      if (const auto fk = db.foreign_key(target.relation, column)) skip.insert(to_lower(fk->table));
  std::set<std::string> dropped;
  for (const auto& [name, _] : db.source().dropped) dropped.insert(to_lower(name));
  std::vector<std::string> wanted;
  for (const auto& w : words(instruction))
    if (!stopwords().count(w)) wanted.push_back(w);
  auto target_words = name_words(target.column.empty() ? target.relation : target.column);
  for (const auto& w : words(target.meaning)) target_words.push_back(w);
  auto about_target = [&](const std::string& w) {
    return std::any_of(target_words.begin(), target_words.end(), [&](const auto& t) { return same_word(w, t); });
  };
  SqliteStatement tables(db.handle(), "SELECT name FROM sqlite_master WHERE type = 'table'", "oracle filler");
  while (tables.step()) {
    const std::string table = tables.text(0);
    if (skip.count(to_lower(table))) continue;
    for (const auto& table_word : name_words(table)) {
      for (size_t i = 0; i < wanted.size(); ++i) {
        if (!same_word(wanted[i], table_word) || about_target(wanted[i])) continue;
        for (const auto& column : db.columns(table)) {
          if (dropped.count(to_lower(table + "." + column))) continue;
          for (const auto& column_word : name_words(column))
            for (size_t j = 0; j < wanted.size(); ++j)
              if (j != i && wanted[j] != wanted[i] && !stopwords().count(column_word) &&
                  same_word(wanted[j], column_word))
                return true;
        }
      }
    }
  }
  return false;
}

// The dropped column or relation of `table` an instruction is about, chosen once per instruction and table.
const OracleChoice& choose_target(const OracleDatabase& db, const std::string& instruction, const std::string& table,
                                  const json& spec, bool yes_no) {
  const std::string id = instruction + "\x1f" + table + "\x1f" + spec.dump();
  const auto cached = db.choices.find(id);
  if (cached != db.choices.end()) return cached->second;
  OracleChoice choice;
  double best_score = 0, runner_up = 0;
  for (const auto& target : targets_of(db, table)) {
    std::string mentioned = yes_no ? longest_mentioned(instruction, target_domain(db, target)) : "";
    const double words = word_score(instruction, target);
    // between targets its words match equally, a yes/no question asks for the flag ("Is this a charter school?":
    // Charter School (Y/N), not the charter number)
    const double flag = yes_no && words > 0 && is_flag(db, target) ? 0.5 : 0.0;
    const double evidence = words + (mentioned.empty() ? 0.0 : 4.0) + (domain_matches(db, target, spec) ? 6.0 : 0.0);
    const double own = target.via.empty() ? 0.05 : 0.0;  // the identified row's own column before a referencing row's
    const double score = evidence > 0 ? evidence + flag + own : 0.0;
    if (score > best_score) {
      runner_up = best_score;
      choice = {target, mentioned}, best_score = score;
    } else {
      runner_up = std::max(runner_up, score);
    }
  }
  // two columns whose names the instruction names equally ("the total goals": home or away goals?)
  constexpr double kTie = 1e-9, kNamed = 1.5;  // a word of each name, less a few it lacks
  if (best_score >= kNamed && best_score - runner_up < kTie) choice = {};
  if (choice.target && asks_stored_column_elsewhere(db, instruction, table, *choice.target)) choice = {};
  return db.choices[id] = choice;
}

std::string input_text(const json& input) {
  if (!input.is_array() && !input.is_object()) return text_of(input);
  std::string out;
  for (const auto& part : input) out += (out.empty() ? "" : " | ") + input_text(part);
  return out;
}

// The rows an input identifies: by the columns it names, else by key values found in its text.
std::vector<Identified> identify_input(const OracleDatabase& db, const json& input) {
  if (input.is_object())
    if (auto named = identify_named(db, input); !named.empty()) return named;
  return identify(db, input_text(input));
}

std::optional<json> answer_for(const OracleDatabase& db, const std::string& instruction, const json& input,
                               const json& spec) {
  for (const auto& found : identify_input(db, input)) {
    const bool yes_no = is_yes_no(instruction);
    const OracleChoice& choice = choose_target(db, instruction, found.table, spec, yes_no);
    if (!choice.target) continue;
    const Target* best = &*choice.target;
    const std::string& best_value = choice.mentioned;
    const auto truth_or_none = truth_for(db, *best, found);
    if (!truth_or_none) return std::nullopt;
    const json& truth = *truth_or_none;
    for (size_t i = 1; i < found.rows.size(); ++i) {  // rows the input cannot tell apart must agree
      Identified one = found;
      one.rows = {found.rows[i]};
      if (truth_for(db, *best, one) != truth_or_none) return std::nullopt;
    }
    if (!yes_no || truth.is_null()) return truth;  // an unknown fact answers every yes/no question "unknown"
    if (!best_value.empty()) {
      if (truth.is_array()) {
        for (const auto& item : truth)
          if (to_lower(text_of(item)) == to_lower(best_value)) return json(true);
        return json(false);
      }
      return json(to_lower(text_of(truth)) == to_lower(best_value));
    }
    if (const auto verdict = compare(instruction, truth)) return json(*verdict);
    if (is_flag(db, *best))
      if (const auto flag = flag_of(truth)) return json(*flag);
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<json> true_function_answer(const OracleDatabase& db, const std::string& kind,
                                         const std::string& instruction, const json& input, const json& spec) {
  if (kind == "match") {  // the allowed value naming the same thing, compared without case and punctuation
    const std::string wanted = normalize_text(input_text(input));
    for (const auto& value : spec.value("allowed", std::vector<std::string>{}))
      if (normalize_text(value) == wanted) return json(value);
    return std::nullopt;
  }
  if (kind == "qa" && input.is_array()) {  // the first row of the group that identifies something
    for (const auto& row : input)
      if (auto answer = answer_for(db, instruction, row, spec)) return answer;
    return std::nullopt;
  }
  return answer_for(db, instruction, input, spec);
}

}  // namespace relmem::evaluation
