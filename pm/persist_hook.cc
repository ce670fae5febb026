#include "pm/persist_hook.h"

#include <unistd.h>

#include <atomic>

namespace gpkv::pm {
namespace {

std::atomic<PersistHook> g_hook{nullptr};
std::atomic<void*> g_context{nullptr};
std::atomic<uint64_t> g_count{0};
std::atomic<uint64_t> g_crash_at{0};
std::atomic<MapHook> g_map_hook{nullptr};
std::atomic<void*> g_map_context{nullptr};
std::atomic<uint64_t> g_failing_syncs{0};

void CountOnly(void*, const void*, size_t, uint64_t) {}

void CrashAt(void*, const void*, size_t, uint64_t index) {
  if (index == g_crash_at.load(std::memory_order_relaxed)) _exit(kCrashExitCode);
}

}  // namespace

void TEST_SetPersistHook(PersistHook hook, void* context) {
  g_context.store(context, std::memory_order_relaxed);
  g_count.store(0, std::memory_order_relaxed);
  g_hook.store(hook, std::memory_order_release);
}

uint64_t TEST_PersistPointCount() { return g_count.load(std::memory_order_relaxed); }

void TEST_CountPersistPoints() { TEST_SetPersistHook(&CountOnly, nullptr); }

void TEST_CrashAtPersistPoint(uint64_t index) {
  g_crash_at.store(index, std::memory_order_relaxed);
  TEST_SetPersistHook(&CrashAt, nullptr);
}

void RunPersistHook(const void* address, size_t length) {
  PersistHook hook = g_hook.load(std::memory_order_acquire);
  if (hook == nullptr) return;
  uint64_t index = g_count.fetch_add(1, std::memory_order_relaxed);
  hook(g_context.load(std::memory_order_relaxed), address, length, index);
}

void TEST_SetMapHook(MapHook hook, void* context) {
  g_map_context.store(context, std::memory_order_relaxed);
  g_map_hook.store(hook, std::memory_order_release);
}

void RunMapHook(const uint8_t* base, size_t size, const char* path) {
  MapHook hook = g_map_hook.load(std::memory_order_acquire);
  if (hook != nullptr) hook(g_map_context.load(std::memory_order_relaxed), base, size, path);
}

void TEST_FailNextSyncs(uint64_t count) { g_failing_syncs.store(count, std::memory_order_relaxed); }

bool TakeInjectedSyncFailure() {
  uint64_t left = g_failing_syncs.load(std::memory_order_relaxed);
  while (left != 0) {
    if (g_failing_syncs.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

}  // namespace gpkv::pm
