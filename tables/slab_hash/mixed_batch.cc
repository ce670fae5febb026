#include "tables/slab_hash/mixed_batch.h"

#include <string>

#include "tables/slab_hash/table.h"
#include "tables/table_facade.h"

namespace gpkv::slab_hash {

Status MixedBatch(Table& table, ConstBytes ops, ConstBytes keys, MutableBytes values,
                  MutableBytes results, const BatchOptions& options) {
  const std::string where = "table '" + table.name() + "'";
  auto* front = dynamic_cast<SlabHashTable*>(tables::FamilyTableOf(table));
  if (front == nullptr) {
    return Status::InvalidArgument(where + ": a mixed batch needs an open volatile hash table");
  }
  const size_t count = ops.size();
  const TableOptions& sizes = table.options();
  if (keys.size() != count * sizes.key_size || values.size() != count * sizes.value_size ||
      results.size() != count) {
    return Status::InvalidArgument(where + ": a mixed batch of " + std::to_string(count) +
                                   " operations needs as many keys, values and results");
  }
  if (count == 0) return Status::OK();
  if (ops.data() == nullptr || keys.data() == nullptr || values.data() == nullptr ||
      results.data() == nullptr) {
    return Status::InvalidArgument(where + ": a mixed batch with a null array");
  }
  return front->Mixed(ops.bytes(), keys.bytes(), values.bytes(), results.bytes(), count,
                      options.stream);
}

}  // namespace gpkv::slab_hash
