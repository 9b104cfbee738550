#include "relmem/memories/values/value_formats.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <vector>

#include "relmem/memories/values/value_lexicon.hpp"

namespace relmem {
namespace {

const char* const kMonthAbbreviations[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                           "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};

// The month a word names ("March", "mar", "Sept"), through the lexicon's month channel; 0 when none.
int month_of(const std::string& word) {
  const ValueLexicon& lexicon = ValueLexicon::shared();
  for (uint32_t id : lexicon.concepts_of(ValueLexicon::key_of(word))) {
    const auto& concept_entry = lexicon.concept_at(id);
    if (concept_entry.channel == Channel::Month) return std::stoi(concept_entry.name);
  }
  return 0;
}

bool valid(const CivilDate& d) { return d.year >= 1000 && d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= 31; }

int full_year(int year) { return year >= 100 ? year : (year < 50 ? 2000 + year : 1900 + year); }

enum class DateFormat { None, Iso, IsoSlash, DayMonYear };

// The date format of a stored value, and what follows the date in it (" 00:00:00").
DateFormat stored_date_format(const std::string& stored, std::string& rest) {
  static const std::regex iso(R"((\d{4})([-/])(\d{2})\2(\d{2})(.*))");
  static const std::regex day_mon(R"((\d{1,2})-([A-Za-z]{3})-(\d{2,4}))");
  std::smatch m;
  if (std::regex_match(stored, m, iso)) {
    rest = m[5];
    if (!rest.empty() && rest[0] != ' ' && rest[0] != 'T') return DateFormat::None;
    return m[2] == "-" ? DateFormat::Iso : DateFormat::IsoSlash;
  }
  if (std::regex_match(stored, m, day_mon) && month_of(m[2])) return DateFormat::DayMonYear;
  return DateFormat::None;
}

std::string two_digits(int x) {
  char text[8];
  std::snprintf(text, sizeof text, "%02d", x);
  return text;
}

}  // namespace

std::optional<CivilDate> parse_written_date(const std::string& text) {
  static const std::regex iso(R"(\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ T].*)?)");
  static const std::regex month_first(R"(\s*([A-Za-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\s*)");
  static const std::regex day_first(R"(\s*(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([A-Za-z]+)\.?,?\s+(\d{4})\s*)");
  static const std::regex day_mon(R"(\s*(\d{1,2})-([A-Za-z]{3,9})-(\d{2}|\d{4})\s*)");
  std::smatch m;
  CivilDate d;
  if (std::regex_match(text, m, iso)) {
    d = {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
  } else if (std::regex_match(text, m, month_first)) {
    d = {std::stoi(m[3]), month_of(m[1]), std::stoi(m[2])};
  } else if (std::regex_match(text, m, day_first)) {
    d = {std::stoi(m[3]), month_of(m[2]), std::stoi(m[1])};
  } else if (std::regex_match(text, m, day_mon)) {
    d = {full_year(std::stoi(m[3])), month_of(m[2]), std::stoi(m[1])};
  } else {
    return std::nullopt;
  }
  if (!valid(d)) return std::nullopt;
  return d;
}

std::optional<std::string> parse_written_number(const std::string& text) {
  static const std::regex number(
      R"(\s*([$€£]?)\s*(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(k|K|m|M|bn|million|billion|thousand)?\s*)");
  std::smatch m;
  if (!std::regex_match(text, m, number)) return std::nullopt;
  std::string digits = m[2];
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  const std::string fraction = m[3];
  const std::string unit = m[4];
  double scale = 1;
  if (unit == "k" || unit == "K" || unit == "thousand") scale = 1e3;
  if (unit == "m" || unit == "M" || unit == "million") scale = 1e6;
  if (unit == "bn" || unit == "billion") scale = 1e9;
  const double value = std::stod(digits + fraction) * scale;
  if (!std::isfinite(value) || value > 1e15) return std::nullopt;
  if (value == std::floor(value)) return std::to_string(static_cast<long long>(value));
  char out[32];
  std::snprintf(out, sizeof out, "%.10g", value);
  return std::string(out);
}

std::optional<std::string> written_as_stored(const std::string& written, const std::string& stored_sample) {
  std::string rest;
  const DateFormat format = stored_date_format(stored_sample, rest);
  std::optional<std::string> out;
  if (format != DateFormat::None) {
    const auto date = parse_written_date(written);
    if (!date) return std::nullopt;
    if (format == DateFormat::DayMonYear) {
      const bool long_year = stored_sample.size() - stored_sample.rfind('-') - 1 == 4;
      out = two_digits(date->day) + "-" + kMonthAbbreviations[date->month - 1] + "-" +
            (long_year ? std::to_string(date->year) : two_digits(date->year % 100));
    } else {
      const std::string separator = format == DateFormat::Iso ? "-" : "/";
      out = std::to_string(date->year) + separator + two_digits(date->month) + separator + two_digits(date->day) +
            (rest.empty() || rest.find_first_not_of(" T0:.") == std::string::npos ? rest : "");
    }
  } else if (parse_written_number(stored_sample)) {
    out = parse_written_number(written);
  }
  if (!out || *out == written) return std::nullopt;
  return out;
}

}  // namespace relmem
