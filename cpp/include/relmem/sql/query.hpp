#pragma once
// One parsed SELECT with its name resolution: the entry point for reading, checking and rewriting a query.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "relmem/catalog/schema.hpp"
#include "relmem/common.hpp"
#include "relmem/sql/ast.hpp"
#include "relmem/sql/conditions.hpp"
#include "relmem/sql/resolve.hpp"
#include "relmem/sql/rewrite.hpp"

namespace relmem::sql {

class Query {
 public:
  // Throws SyntaxError for SQL that does not parse. With a schema, unqualified columns are resolved against it.
  explicit Query(std::string sql, std::optional<Schema> schema = std::nullopt);

  const std::string& sql() const { return state_->sql; }
  const Select& select() const { return state_->select; }
  const Resolution& resolution() const { return state_->resolution; }
  const Schema* schema() const { return state_->schema ? &*state_->schema : nullptr; }

  std::vector<Condition> conditions() const { return extract_conditions(select(), resolution()); }
  // The base tables read anywhere in the query (CTE names excluded), in order of first appearance, each once;
  // spelled as in the schema when it has them.
  std::vector<std::string> tables() const;
  // The literal nodes in source order (index = literal_index).
  std::vector<const Expr*> literals() const { return relmem::sql::literals(select()); }
  // True when every result column of the statement (its first SELECT of a compound) is a count(...) call: the
  // query answers "how many", whatever it groups by.
  bool returns_counts_only() const;
  // The whole tree written afresh.
  std::string render() const;
  // The original text with the given literals replaced (see rewrite_literals).
  std::string rewrite_literals(const std::map<int, LiteralValue>& replacements) const;

 private:
  struct State {
    State(std::string text, std::optional<Schema> schema_copy);
    std::string sql;
    std::optional<Schema> schema;
    Select select;
    Resolution resolution;  // points into `schema` and `select`, which therefore never move
  };
  std::shared_ptr<const State> state_;
};

}  // namespace relmem::sql
