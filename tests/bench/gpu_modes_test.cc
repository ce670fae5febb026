// The modes of `gpkv-bench --suite gpu` (bench/gpu/gpu_modes.h): every mode
// and option the GPU benchmark runs opens its table as before, and a bad or
// removed one is refused before anything runs. Plain C++: runs without a
// device.
#include "bench/gpu/gpu_modes.h"

#include <gtest/gtest.h>

#include <string>

namespace gpkv::bench::gpu {
namespace {

TEST(GpuBenchModes, BaseModesPickTheIndexModeWithDefaultOptions) {
  const HashGpuOptions defaults;
  const double default_cache_fraction = Options().gpu_cache_fraction;
  for (const auto& [name, index_mode] :
       {std::pair<std::string, HashGpuIndexMode>{"direct", HashGpuIndexMode::kDirect},
        {"mirror", HashGpuIndexMode::kMirror},
        {"staged", HashGpuIndexMode::kStaged}}) {
    auto mode = ParseGpuMode(name);
    ASSERT_TRUE(mode.ok()) << mode.status().ToString();
    EXPECT_EQ(mode->options.index_mode, index_mode) << name;
    EXPECT_EQ(mode->cache_fraction, default_cache_fraction) << name;
    EXPECT_EQ(mode->options.bkt_cache_reload_ops, defaults.bkt_cache_reload_ops) << name;
    EXPECT_EQ(mode->options.sorted_get_min_ops, defaults.sorted_get_min_ops) << name;
    EXPECT_EQ(mode->options.warp_puts, defaults.warp_puts) << name;
    EXPECT_EQ(mode->options.tile_index_gets, defaults.tile_index_gets) << name;
  }
}

TEST(GpuBenchModes, OptionsSetTheirTuningAndKernels) {
  auto direct = ParseGpuMode("direct+cache40+reload21+sortall");
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_DOUBLE_EQ(direct->cache_fraction, 0.4);
  EXPECT_EQ(direct->options.bkt_cache_reload_ops, uint64_t{1} << 21);
  EXPECT_EQ(direct->options.sorted_get_min_ops, 0u);

  auto nocache = ParseGpuMode("direct+nocache");
  ASSERT_TRUE(nocache.ok()) << nocache.status().ToString();
  EXPECT_EQ(nocache->cache_fraction, 0.0);

  auto mirror = ParseGpuMode("mirror+warpputs");
  ASSERT_TRUE(mirror.ok()) << mirror.status().ToString();
  EXPECT_EQ(mirror->options.index_mode, HashGpuIndexMode::kMirror);
  EXPECT_TRUE(mirror->options.warp_puts);
  EXPECT_EQ(BaseMode("mirror+warpputs"), "mirror");
  EXPECT_FALSE(mirror->options.tile_index_gets);

  auto tile = ParseGpuMode("staged+tilegets");
  ASSERT_TRUE(tile.ok()) << tile.status().ToString();
  EXPECT_EQ(tile->options.index_mode, HashGpuIndexMode::kStaged);
  EXPECT_TRUE(tile->options.tile_index_gets);
  EXPECT_FALSE(tile->options.warp_puts);
}

TEST(GpuBenchModes, ApplySetsTheDbOptionsOfTheMode) {
  auto mode = ParseGpuMode("direct+cache40+warpputs");
  ASSERT_TRUE(mode.ok()) << mode.status().ToString();
  Options base;
  base.cpu_threads = 3;
  const Options options = mode->Apply(base);
  EXPECT_EQ(options.backend, Backend::kCuda);
  EXPECT_EQ(options.hash_gpu.index_mode, HashGpuIndexMode::kDirect);
  EXPECT_TRUE(options.hash_gpu.warp_puts);
  EXPECT_DOUBLE_EQ(options.gpu_cache_fraction, 0.4);
  EXPECT_EQ(options.cpu_threads, 3);
}

TEST(GpuBenchModes, EveryModeOfTheRecordedRunsIsAccepted) {
  // The --modes lists of docs/bench/gpu-backend.md and README.md that the
  // benchmark still runs.
  for (const char* mode :
       {"direct", "direct+nocache", "direct+cache40", "mirror", "mirror+warpputs",
        "mirror+tilegets", "staged+tilegets", "staged", "cpu", "naive"}) {
    EXPECT_TRUE(CheckMode(mode).ok()) << mode << ": " << CheckMode(mode).ToString();
  }
}

TEST(GpuBenchModes, TableModesMakeLoggedAndOrderedTables) {
  EXPECT_TRUE(CheckMode("logged").ok());
  EXPECT_TRUE(CheckMode("ordered").ok());
  EXPECT_TRUE(IsTableMode("logged"));
  EXPECT_TRUE(IsTableMode("ordered"));
  EXPECT_FALSE(IsTableMode("mirror"));
  const TableOptions logged = ModeTableOptions("logged", 1000);
  EXPECT_EQ(logged.kind, TableKind::kHash);
  EXPECT_EQ(logged.expected_keys, 1000u);
  EXPECT_EQ(logged.hash_log.batch_entries, uint64_t{1} << 20);
  EXPECT_EQ(logged.hash_log.log_batches, 32u);
  const TableOptions ordered = ModeTableOptions("ordered", 1000);
  EXPECT_EQ(ordered.kind, TableKind::kOrdered);
  EXPECT_EQ(ordered.hash_log.log_batches, 0u);
  const TableOptions mirror = ModeTableOptions("mirror", 1000);
  EXPECT_EQ(mirror.kind, TableKind::kHash);
  EXPECT_EQ(mirror.hash_log.log_batches, 0u);
  EXPECT_EQ(mirror.expected_keys, 1000u);
}

TEST(GpuBenchModes, BadModesAreInvalidArguments) {
  for (const char* mode : {"", "gpu", "direct+", "direct+bogus", "direct+cache", "direct+cache101",
                           "direct+cachex", "direct+reload99", "cpu+thread", "naive+nocache",
                           "+direct", "logged+nocache", "ordered+warpputs",
                           // Removed from the benchmark with the kernels they ran.
                           "direct+oneshot", "direct+thread", "mirror+oneshot", "mirror+thread"}) {
    Status checked = CheckMode(mode);
    EXPECT_TRUE(checked.IsInvalidArgument()) << "'" << mode << "': " << checked.ToString();
  }
}

}  // namespace
}  // namespace gpkv::bench::gpu
