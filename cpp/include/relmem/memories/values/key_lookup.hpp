#pragma once
// A literal compared with a foreign-key column that stores keys ("flights.SourceAirport = 'Aberdeen'", where
// SourceAirport holds airport codes) while the referenced table stores the literal itself (airports.City): the
// comparison becomes a lookup of the keys, "SourceAirport IN (SELECT AirportCode FROM airports WHERE City =
// 'Aberdeen')", as a join through the key reads it. Every key the literal names counts (Aberdeen has two airports),
// where a fuzzy match of the literal against the keys would pick one.
#include <optional>
#include <string>
#include <vector>

#include "relmem/catalog/catalog.hpp"
#include "relmem/memories/values/value_conditions.hpp"

namespace relmem {

struct KeyLookup {
  ValueCondition condition;  // the column compared with = or != to the literal, on either side
  std::string table;         // the table the column's foreign key references
  std::string key;           // its column the foreign key names
  std::string column;        // its column that stores the literal as written
};

// The lookup for `condition`, whose column does not store its literal: when the column is compared with = or !=, has
// exactly one single-column foreign key, and the referenced table stores the literal as written in exactly one text
// column (or in several that name the same keys; the first in table order is taken). nullopt otherwise. Reads the
// database with read-only queries.
std::optional<KeyLookup> find_key_lookup(const ValueCondition& condition, const std::string& db,
                                         const Catalog& catalog);

struct KeyLookupRewrite {
  std::string sql;                  // the input with the lookups applied, every other byte unchanged
  std::vector<KeyLookup> applied;  // in source order
};

// Rewrites each lookup's comparison into "column [NOT] IN (SELECT key FROM table WHERE column = literal)", the column
// as the SQL writes it ("T1.SourceAirport", "x.code COLLATE NOCASE"). A lookup names its literal by literal_index
// (literal rewrites of other conditions may come first). The literal keeps its index: the rewrite holds one literal
// where there was one, and no literal stands between a comparison's column and its literal.
KeyLookupRewrite apply_key_lookups(const std::string& sql, const Schema& schema, const std::vector<KeyLookup>& lookups);

}  // namespace relmem
