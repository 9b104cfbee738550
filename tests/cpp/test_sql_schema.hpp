#pragma once
// A small concert database schema, built in memory, for the SQL analysis tests.
#include "relmem/catalog/schema.hpp"

namespace relmem_test {

inline relmem::Schema concert_schema() {
  using relmem::Column;
  using relmem::ForeignKey;
  using relmem::Table;
  relmem::Schema schema;
  schema.name = "concerts";
  schema.tables.push_back(Table{"singer",
                                {Column{"singer_id", "INTEGER", true, false}, Column{"name", "TEXT", false, false},
                                 Column{"country", "TEXT", false, false}, Column{"age", "INT", false, false}},
                                {},
                                0});
  schema.tables.push_back(Table{"stadium",
                                {Column{"stadium_id", "INTEGER", true, false}, Column{"name", "TEXT", false, false},
                                 Column{"capacity", "INT", false, false}},
                                {},
                                0});
  schema.tables.push_back(Table{"concert",
                                {Column{"concert_id", "INTEGER", true, false},
                                 Column{"concert_name", "TEXT", false, false},
                                 Column{"stadium_id", "INT", false, false}, Column{"year", "TEXT", false, false}},
                                {ForeignKey{"stadium_id", "stadium", "stadium_id"}},
                                0});
  schema.tables.push_back(Table{"singer_in_concert",
                                {Column{"concert_id", "INT", true, false}, Column{"singer_id", "INT", true, false}},
                                {ForeignKey{"concert_id", "concert", "concert_id"}, ForeignKey{"singer_id", "singer", ""}},
                                0});
  return schema;
}

}  // namespace relmem_test
