// libFuzzer target: the input is the first bytes of a 1 MiB pool file
// (pool_fuzz_body.h says what runs and what must hold). The CMake target
// pool_fuzzer of a clang build with -DGPKV_FUZZER=ON (the library's objects
// instrumented for coverage): scripts/ci-fuzz.sh builds it with
// -fsanitize=fuzzer,address,undefined in the ASan + UBSan build of
// scripts/ci-sanitizers.sh. Not a test (the file name does not end in
// _test.cc).
//
// With GPKV_FUZZ_WRITE_SEEDS=<dir> in the environment it writes the seed
// pools of the current format into <dir> and exits: scripts/ci-fuzz.sh runs
// that first, so the corpus always holds valid pools besides the checked-in
// seeds (tests/fuzz/corpus/).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "pool_fuzz_body.h"

namespace {

std::string ScratchPath() { return "/dev/shm/gpkv-fuzz-" + std::to_string(::getpid()) + ".gpkv"; }

void RemoveScratch() { ::unlink(ScratchPath().c_str()); }

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* seed_dir = std::getenv("GPKV_FUZZ_WRITE_SEEDS");
  if (seed_dir != nullptr) {
    auto seeds = gpkv::fuzz::MakeSeedPools(ScratchPath());
    for (size_t i = 0; i < seeds.size(); ++i) {
      std::string path = std::string(seed_dir) + "/seed-" + std::to_string(i) + ".pool";
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(seeds[i].data()),
                static_cast<std::streamsize>(seeds[i].size()));
      std::printf("wrote %s (%zu bytes)\n", path.c_str(), seeds[i].size());
    }
    std::exit(seeds.empty() ? 1 : 0);
  }
  std::atexit(RemoveScratch);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string violation = gpkv::fuzz::RunPoolInput(data, size, ScratchPath());
  if (!violation.empty()) {
    std::fprintf(stderr, "gpkv pool fuzzer: property violated: %s\n", violation.c_str());
    std::abort();
  }
  return 0;
}
