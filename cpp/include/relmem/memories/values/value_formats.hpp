#pragma once
// Dates and numbers written differently from how a column stores them: "March 3, 2010" for '2010-03-03' or
// '03-MAR-10', "1,000" for 1000, "5k" for 5000. The stored format is read off a value the column holds.
#include <optional>
#include <string>

namespace relmem {

struct CivilDate {
  int year = 0, month = 0, day = 0;
};

// ISO (2010-03-03, 2010/03/03), "March 3, 2010", "3 March 2010", "Mar. 3 2010", "03-MAR-10". Slash dates with the
// day first or last (03/04/2010) are ambiguous and not parsed.
std::optional<CivilDate> parse_written_date(const std::string& text);
// The number as plain decimal text: "1,000" -> "1000", "5k" -> "5000", "$1.5 million" -> "1500000", "12.50" ->
// "12.5". nullopt for text that is not one number.
std::optional<std::string> parse_written_number(const std::string& text);

// How `written` is written in the format of `stored_sample` (a value of the column): a date in the sample's date
// format, or a number as plain decimal text when the sample is a number. nullopt when `written` is no date or
// number, the sample shows no format for it, or it is already written that way.
std::optional<std::string> written_as_stored(const std::string& written, const std::string& stored_sample);

}  // namespace relmem
