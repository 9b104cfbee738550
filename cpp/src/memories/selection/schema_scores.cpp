#include "relmem/memories/selection/schema_scores.hpp"

#include "relmem/memories/selection/selection_memory.hpp"

namespace relmem {

std::vector<SchemaScores> SelectionMemory::schema_scores(const std::string& question,
                                                         const std::vector<std::string>& dbs) const {
  std::vector<const Entry*> entries;
  for (const auto& db : dbs) {
    auto it = entries_.find(db);
    if (it == entries_.end()) throw Error("unknown database '" + db + "' in the selection memory");
    entries.push_back(&it->second);
  }
  const RowMatrix vector = encoder_->encode({question});
  if (vector.rows() != 1 || vector.cols() != encoder_->dim())
    throw Error("encoder '" + encoder_->name() + "' returned a matrix of the wrong shape");
  std::vector<SchemaScores> out;
  std::vector<int64_t> ids;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = *entries[i];
    SchemaScores scores;
    scores.database = dbs[i];
    scores.tables = entry.tables;
    const auto tables = static_cast<int64_t>(entry.tables.size());
    ids.clear();
    for (int64_t t = 0; t < tables; ++t) ids.push_back(entry.first_table + t);
    scores.table_scores.resize(ids.size());
    tables_.inner_products(vector.data(), ids.data(), tables, scores.table_scores.data());
    ids.clear();
    for (int64_t c = 0; c < entry.columns; ++c) ids.push_back(entry.first_column + c);
    scores.column_scores.resize(ids.size());
    columns_.inner_products(vector.data(), ids.data(), entry.columns, scores.column_scores.data());
    out.push_back(std::move(scores));
  }
  return out;
}

}  // namespace relmem
