// The pool fuzzer's body (pool_fuzz_body.h) under the ordinary test build
// (and the sanitizer build of scripts/ci-sanitizers.sh): the checked-in corpus
// is replayed, the seed pools are regenerated and checked to be valid pools of
// the current format, and a few thousand seeded mutations of them (bit flips,
// overwritten words, copied ranges, cut inputs; a third of them aimed at the
// header, the superblocks and the extent table) run through the body. The
// coverage-guided run is scripts/ci-fuzz.sh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "pool_fuzz_body.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::fuzz {
namespace {

double Scale() {
  const char* text = std::getenv("GPKV_CRASH_SCALE");
  double scale = text ? std::atof(text) : 1.0;
  return scale > 0 ? scale : 1.0;
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string CorpusDir() { return std::string(GPKV_SOURCE_DIR) + "/tests/fuzz/corpus"; }

TEST(FuzzCorpus, CheckedInInputsRunCleanly) {
  testutil::TempPool scratch("fuzz-replay");
  uint64_t inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    if (!entry.is_regular_file()) continue;
    std::vector<uint8_t> input = ReadAll(entry.path().string());
    std::string violation = RunPoolInput(input.data(), input.size(), scratch.path());
    EXPECT_TRUE(violation.empty()) << entry.path() << ": " << violation;
    ++inputs;
  }
  std::printf("[crash totals] fuzz corpus replay: %llu checked-in inputs executed\n",
              static_cast<unsigned long long>(inputs));
  EXPECT_GE(inputs, 3u) << "the seed corpus " << CorpusDir() << " is missing";
}

TEST(FuzzCorpus, SeedPoolsAreValidPoolsOfTheCurrentFormat) {
  testutil::TempPool scratch("fuzz-seeds");
  auto seeds = MakeSeedPools(scratch.path());
  ASSERT_EQ(seeds.size(), 9u);
  for (size_t i = 0; i < seeds.size(); ++i) {
    const std::vector<uint8_t>& seed = seeds[i];
    ASSERT_LT(seed.size(), kFuzzPoolSize / 2) << "a seed should be mostly trailing zeros";
    ASSERT_TRUE(WritePoolFile(scratch.path(), seed.data(), seed.size()));
    auto report = recovery::VerifyPool(scratch.path(), nullptr);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    if (i + 2 < seeds.size()) {
      EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
    } else {
      // The two checkpoints in flight (ordered, logged hash): a run or an
      // image written but not named by a published manifest or checkpoint
      // yet, a note (freed at the next open), not damage.
      EXPECT_FALSE(report->HasCorruption()) << report->findings[0].message;
      EXPECT_EQ(report->findings.size(), 1u);
    }
  }
  // The checked-in seeds too: when the format changes, regenerate them with
  // GPKV_FUZZ_WRITE_SEEDS=tests/fuzz/corpus build-asan/pool_fuzzer (ci-fuzz.sh).
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    if (entry.path().filename().string().rfind("seed-", 0) != 0) continue;
    std::vector<uint8_t> input = ReadAll(entry.path().string());
    ASSERT_TRUE(WritePoolFile(scratch.path(), input.data(), input.size()));
    auto report = recovery::VerifyPool(scratch.path(), nullptr);
    ASSERT_TRUE(report.ok());
    EXPECT_FALSE(report->HasCorruption())
        << entry.path()
        << " is not a valid pool of this format any more: " << report->findings[0].message;
  }
}

// One mutation of `input`, in the spirit of libFuzzer's mutators but aimed
// at the pool's metadata pages more often than at its zero tail.
void Mutate(std::vector<uint8_t>& input, std::mt19937_64& random) {
  if (input.empty()) input.resize(64);
  auto offset = [&]() -> size_t {
    // A third of the mutations in the bytes that hold the pool together
    // (header, both superblocks, the first extent table entries), a third in
    // the first 64 KiB (catalog, roots, first levels), the rest anywhere.
    static const size_t kStructural[][2] = {{0, 128}, {4096, 64}, {8192, 64}, {12288, 512}};
    switch (random() % 3) {
      case 0: {
        const size_t* range = kStructural[random() % 4];
        size_t at = range[0] + random() % range[1];
        if (at < input.size()) return at;
        break;
      }
      case 1:
        return random() % std::min<size_t>(input.size(), 65536);
      default:
        break;
    }
    return random() % input.size();
  };
  switch (random() % 6) {
    case 0:
      input[offset()] ^= static_cast<uint8_t>(1u << (random() % 8));
      break;
    case 1:
      input[offset()] = static_cast<uint8_t>(random());
      break;
    case 2: {
      static const uint64_t kInteresting[] = {0,           1,
                                              ~0ULL,       0x7fffffffffffffffULL,
                                              0x1000,      0x100000,
                                              0xfff,       0x8000000000000000ULL,
                                              0x4c4c41ULL, 0x20000000000000ULL};
      size_t at = offset() & ~size_t{7};
      if (at + 8 <= input.size()) {
        uint64_t value = kInteresting[random() % (sizeof(kInteresting) / 8)];
        std::memcpy(&input[at], &value, 8);
      }
      break;
    }
    case 3: {
      size_t from = offset(), to = offset(), length = 1 + random() % 256;
      if (from + length <= input.size() && to + length <= input.size()) {
        std::memmove(&input[to], &input[from], length);
      }
      break;
    }
    case 4:
      input.resize(offset());
      break;
    default:
      for (int i = 0; i < 4; ++i) input[offset()] ^= static_cast<uint8_t>(random());
      break;
  }
}

TEST(FuzzCorpus, SeededMutationsOfTheSeedsViolateNothing) {
  testutil::TempPool scratch("fuzz-mutations");
  testutil::TempPool seed_scratch("fuzz-mutation-seeds");
  auto seeds = MakeSeedPools(seed_scratch.path());
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 random(0xf022);
  const uint64_t executions = static_cast<uint64_t>(10000 * Scale()) + 1;
  uint64_t violations = 0;
  for (uint64_t i = 0; i < executions; ++i) {
    std::vector<uint8_t> input = seeds[random() % seeds.size()];
    int mutations = 1 + static_cast<int>(random() % 3);
    for (int m = 0; m < mutations; ++m) Mutate(input, random);
    std::string violation = RunPoolInput(input.data(), input.size(), scratch.path());
    if (!violation.empty()) {
      ++violations;
      if (violations <= 5) ADD_FAILURE() << "mutation " << i << ": " << violation;
    }
  }
  std::printf("[crash totals] fuzz seeded mutations: %llu inputs executed, %llu violations\n",
              static_cast<unsigned long long>(executions),
              static_cast<unsigned long long>(violations));
  EXPECT_EQ(violations, 0u);
}

}  // namespace
}  // namespace gpkv::fuzz
