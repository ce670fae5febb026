// gpu::CopyToDevice / CopyToHost: pageable host memory to the
// device and back through the thread's two pinned chunks, for sizes around
// the chunk size, on the default stream and on a stream of its own, and
// with two threads at once (each has its own chunks).
#include "gpu/staged_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/device_memory.h"

namespace gpkv::gpu {
namespace {

#define SKIP_WITHOUT_DEVICE()                            \
  do {                                                   \
    Status usable = DeviceUsable();                      \
    if (!usable.ok()) GTEST_SKIP() << usable.ToString(); \
  } while (0)

std::vector<uint8_t> RandomBytes(std::mt19937_64& rng, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  for (uint8_t& byte : out) byte = static_cast<uint8_t>(rng());
  return out;
}

// Host -> device (staged) -> host (staged) of `bytes` random bytes; the
// device copy is also read back by a plain copy, and the bytes after the
// target stay as they were.
void RoundTrip(std::mt19937_64& rng, size_t bytes, CUstream_st* stream) {
  SCOPED_TRACE(std::to_string(bytes) + " bytes");
  const std::vector<uint8_t> source = RandomBytes(rng, bytes);
  auto device = DeviceBytes::Allocate(bytes + 1);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  ASSERT_TRUE(CopyToDevice(device->data(), source.data(), bytes, stream, "test").ok());
  std::vector<uint8_t> back(bytes + 64, 0xa5);
  ASSERT_TRUE(CopyToHost(back.data(), device->data(), bytes, stream, "test").ok());
  EXPECT_EQ(std::vector<uint8_t>(back.begin(), back.begin() + bytes), source);
  EXPECT_EQ(std::vector<uint8_t>(back.begin() + bytes, back.end()), std::vector<uint8_t>(64, 0xa5));
  // CopyToHost waited for every copy before it on `stream`.
  std::vector<uint8_t> direct(bytes);
  ASSERT_TRUE(device->CopyToHost(direct.data(), bytes).ok());
  EXPECT_EQ(direct, source);
}

constexpr size_t kChunk = size_t{4} << 20;  // staged_copy.cu's chunk

TEST(StagedCopy, RoundTripsEverySizeAroundTheChunk) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937_64 rng(3);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4097}, kChunk - 1, kChunk, kChunk + 1,
                       2 * kChunk + 7, 5 * kChunk + 4093}) {
    RoundTrip(rng, bytes, nullptr);
  }
}

TEST(StagedCopy, RoundTripsOnAStreamOfItsOwn) {
  SKIP_WITHOUT_DEVICE();
  auto stream = DeviceStream::Create();
  ASSERT_TRUE(stream.ok());
  std::mt19937_64 rng(4);
  for (size_t bytes : {size_t{100}, 3 * kChunk + 5}) RoundTrip(rng, bytes, stream->get());
}

// A "host" side that is device memory (an unaligned batch array, say) is
// copied by the device, not read by the host.
TEST(StagedCopy, DeviceMemoryOnTheOtherSideIsCopiedByDma) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937_64 rng(5);
  const size_t bytes = 2 * kChunk + 3;
  const std::vector<uint8_t> source = RandomBytes(rng, bytes);
  auto first = DeviceBytes::Allocate(bytes);
  auto second = DeviceBytes::Allocate(bytes);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(first->CopyFromHost(source.data(), bytes).ok());
  ASSERT_TRUE(CopyToDevice(second->data(), first->data(), bytes, nullptr, "test").ok());
  auto third = DeviceBytes::Allocate(bytes);
  ASSERT_TRUE(third.ok());
  ASSERT_TRUE(CopyToHost(third->data(), second->data(), bytes, nullptr, "test").ok());
  std::vector<uint8_t> back(bytes);
  ASSERT_TRUE(third->CopyToHost(back.data(), bytes).ok());  // waits for the device
  EXPECT_EQ(back, source);
}

TEST(StagedCopy, ThreadsUseTheirOwnChunks) {
  SKIP_WITHOUT_DEVICE();
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([t] {
      std::mt19937_64 rng(10 + t);
      for (int round = 0; round < 3; ++round) RoundTrip(rng, 2 * kChunk + 13 * (t + 1), nullptr);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace gpkv::gpu
