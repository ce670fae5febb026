// libFuzzer target: the input is the first bytes of a 1 MiB pool file
// (pool_fuzz_body.h says what runs and what must hold). Built by
// scripts/ci-fuzz.sh with clang++ -fsanitize=fuzzer,address,undefined against
// the library sources; not part of the CMake build (the file name does not
// end in _test.cc).
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
