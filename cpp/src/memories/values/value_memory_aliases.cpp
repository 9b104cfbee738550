// The value memory's learned aliases: adding (checked against the stored values), removing, listing, saving.
#include "relmem/memories/values/value_memory.hpp"

namespace relmem {

ValueAlias ValueMemory::add_alias(const std::string& db, const std::string& table, const std::string& column,
                                  const std::string& written, const std::string& stored, const std::string& source,
                                  const std::string& evidence) {
  const auto d = database(db);
  const ColumnValues* c = d->find_column(table, column);
  if (!c) throw Error("unknown column " + table + "." + column + " in database '" + db + "'");
  if (d->find_value(*c, stored) < 0)
    throw Error("'" + stored + "' is not a stored value of " + c->table + "." + c->column + " in '" + db + "'");
  return aliases_.add(ValueAlias{db, c->table, c->column, written, stored, source, evidence, "", 0});
}

bool ValueMemory::remove_alias(const std::string& db, const std::string& table, const std::string& column,
                               const std::string& written) {
  return aliases_.remove(db, table, column, written);
}

std::vector<ValueAlias> ValueMemory::aliases(const std::string& db, const std::string& table,
                                             const std::string& column) const {
  return aliases_.list(db, table, column);
}

void ValueMemory::save_aliases(const std::string& folder) const { aliases_.save(aliases_path(folder)); }

}  // namespace relmem
