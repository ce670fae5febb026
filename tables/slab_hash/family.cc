#include "tables/slab_hash/family.h"

#include "tables/slab_hash/cli.h"
#include "tables/slab_hash/table.h"
#include "tables/volatile_family.h"

namespace gpkv::slab_hash {
namespace {

class SlabHashFamily final : public tables::VolatileFamily {
 public:
  SlabHashFamily()
      : VolatileFamily(kFamilyName, TableKind::kHash, Cli(),
                       "a hash geometry (levels, hash locations, slots per bucket, top buckets) "
                       "applies to persistent hash tables; a volatile hash table (slab hash) "
                       "sizes itself from the expected keys: leave the geometry at its default",
                       &OpenEmptyTable) {}
};

}  // namespace

const tables::TableFamily& Family() { return tables::Instance<SlabHashFamily>(); }

}  // namespace gpkv::slab_hash
