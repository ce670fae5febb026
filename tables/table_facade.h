// tables::TableFacade: a gpkv::Table that wraps a family's own table (the
// engine's engine::CheckedTable, the Table the DB hands out, is one), and
// tables::FamilyTableOf, which finds the family's table behind a Table the
// DB handed out. A family's documented hook (tables/slab_hash/mixed_batch.h)
// uses it to reach its own front from the Table a caller holds, without the
// family knowing the engine.
//
// Who may call: the families' hooks. Thread safety: family_table() reads one
// pointer; it is null once the table is closed (DB::Close).
#pragma once

#include "gpkv/table.h"

namespace gpkv::tables {

class TableFacade {
 public:
  // The family's table behind this one; null once it is closed.
  virtual Table* family_table() const = 0;

 protected:
  ~TableFacade() = default;
};

// The family's table behind `table` when `table` is a facade (null when that
// table is closed), else `table` itself.
inline Table* FamilyTableOf(Table& table) {
  if (auto* facade = dynamic_cast<TableFacade*>(&table)) return facade->family_table();
  return &table;
}

}  // namespace gpkv::tables
