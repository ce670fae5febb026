// The snapshot tests of the volatile ordered table (btree_snapshot_test.cc)
// on the GPU backend: reads through a snapshot equal the oracle at its
// timestamp while writers run, and releasing snapshots reclaims versions.
#define GPKV_BTREE_TEST_BACKEND ::gpkv::Backend::kCuda
#define GPKV_BTREE_SUITE(name) name##Gpu

#include "btree/btree_snapshot_test.cc"
#include "btree/gpu/device_environment.h"
