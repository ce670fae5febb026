// The modes of `gpkv-bench --suite gpu` (bench/gpu/gpu_modes.h): every mode
// and option the GPU benchmark had opens its table as before, and a bad one
// is refused before anything runs. Plain C++: runs without a device.
#include "bench/gpu/gpu_modes.h"

#include <gtest/gtest.h>

#include <string>

namespace gpkv::bench::gpu {
namespace {

using ::gpkv::gphash::gpu::GpuIndexMode;
using ::gpkv::gphash::gpu::GpuTableOptions;

TEST(GpuBenchModes, BaseModesPickTheIndexModeWithDefaultOptions) {
  const GpuTableOptions defaults;
  for (const auto& [name, index_mode] :
       {std::pair<std::string, GpuIndexMode>{"direct", GpuIndexMode::kDirect},
        {"mirror", GpuIndexMode::kMirror},
        {"staged", GpuIndexMode::kStaged}}) {
    auto mode = ParseGpuMode(name);
    ASSERT_TRUE(mode.ok()) << mode.status().ToString();
    EXPECT_EQ(mode->options.index_mode, index_mode) << name;
    EXPECT_EQ(mode->options.bkt_cache_fraction, defaults.bkt_cache_fraction) << name;
    EXPECT_EQ(mode->options.bkt_cache_reload_ops, defaults.bkt_cache_reload_ops) << name;
    EXPECT_EQ(mode->options.sorted_get_min_ops, defaults.sorted_get_min_ops) << name;
    EXPECT_FALSE(mode->variants.one_shot_gets || mode->variants.thread_per_op ||
                 mode->variants.warp_puts)
        << name;
  }
}

TEST(GpuBenchModes, OptionsSetTheirTuningAndKernelVariants) {
  auto direct = ParseGpuMode("direct+cache40+reload21+sortall");
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_DOUBLE_EQ(direct->options.bkt_cache_fraction, 0.4);
  EXPECT_EQ(direct->options.bkt_cache_reload_ops, uint64_t{1} << 21);
  EXPECT_EQ(direct->options.sorted_get_min_ops, 0u);

  auto nocache = ParseGpuMode("direct+nocache+oneshot+thread");
  ASSERT_TRUE(nocache.ok()) << nocache.status().ToString();
  EXPECT_EQ(nocache->options.bkt_cache_fraction, 0.0);
  EXPECT_TRUE(nocache->variants.one_shot_gets);
  EXPECT_TRUE(nocache->variants.thread_per_op);
  EXPECT_FALSE(nocache->variants.warp_puts);

  auto mirror = ParseGpuMode("mirror+warpputs");
  ASSERT_TRUE(mirror.ok()) << mirror.status().ToString();
  EXPECT_EQ(mirror->options.index_mode, GpuIndexMode::kMirror);
  EXPECT_TRUE(mirror->variants.warp_puts);
  EXPECT_EQ(BaseMode("mirror+warpputs"), "mirror");
  EXPECT_FALSE(mirror->variants.tile_index_gets);

  auto tile = ParseGpuMode("staged+tilegets");
  ASSERT_TRUE(tile.ok()) << tile.status().ToString();
  EXPECT_EQ(tile->options.index_mode, GpuIndexMode::kStaged);
  EXPECT_TRUE(tile->variants.tile_index_gets);
}

TEST(GpuBenchModes, EveryModeOfTheRecordedRunsIsAccepted) {
  // The --modes lists of docs/bench/gpu-backend.md and README.md.
  for (const char* mode : {"direct", "direct+nocache", "direct+cache40", "direct+oneshot",
                           "direct+thread", "mirror", "mirror+oneshot", "mirror+warpputs",
                           "mirror+thread", "mirror+tilegets", "staged", "cpu", "naive"}) {
    EXPECT_TRUE(CheckMode(mode).ok()) << mode << ": " << CheckMode(mode).ToString();
  }
}

TEST(GpuBenchModes, BadModesAreInvalidArguments) {
  for (const char* mode :
       {"", "gpu", "direct+", "direct+bogus", "direct+cache", "direct+cache101", "direct+cachex",
        "direct+reload99", "cpu+thread", "naive+nocache", "+direct"}) {
    Status checked = CheckMode(mode);
    EXPECT_TRUE(checked.IsInvalidArgument()) << "'" << mode << "': " << checked.ToString();
  }
}

}  // namespace
}  // namespace gpkv::bench::gpu
