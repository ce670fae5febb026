// The oracle tests of the volatile ordered table (btree_oracle_test.cc) on
// the GPU backend: millions of mixed operations against a std::map, every
// key size with values of several sizes, concurrent writers and readers.
#define GPKV_BTREE_TEST_BACKEND ::gpkv::Backend::kCuda
#define GPKV_BTREE_SUITE(name) name##Gpu

#include "btree/btree_oracle_test.cc"
#include "btree/gpu/device_environment.h"
