// Test hooks on the persist points of pm::Pool. A crash-test child process
// counts persist points and stops itself at a chosen one; a power-failure
// simulator can observe every persisted range.
//
// Not for production use: the names carry the TEST_ prefix. With no hook set
// the cost on a persist point is one relaxed atomic load.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpkv::pm {

// Called after the stores of a persist point and before it is made durable:
// (context, address, length, index of the point since the hook was set).
using PersistHook = void (*)(void* context, const void* address, size_t length, uint64_t index);

// Installs (or with nullptr removes) the process-wide hook; resets the count.
void TEST_SetPersistHook(PersistHook hook, void* context);
// Persist points passed since the last TEST_SetPersistHook (counted only
// while a hook is set; TEST_CountPersistPoints() sets a counting-only hook).
uint64_t TEST_PersistPointCount();
void TEST_CountPersistPoints();
// Ends the process with _exit(kCrashExitCode) at persist point `index`
// (0-based) before that point is made durable: the stores of that point may
// or may not be in the file, as after a crash.
constexpr int kCrashExitCode = 86;
void TEST_CrashAtPersistPoint(uint64_t index);

// Called whenever a pool file is mapped writable (base, size, path), so a
// power-failure simulator can shadow the mapping. Process-wide, test only.
using MapHook = void (*)(void* context, const uint8_t* base, size_t size, const char* path);
void TEST_SetMapHook(MapHook hook, void* context);

// Makes the next `count` calls of pm::Pool::Sync on a writable pool return
// IOError (after syncing as usual), as a failing msync would: a test of how
// callers report a failed sync. Process-wide; 0 stops it.
void TEST_FailNextSyncs(uint64_t count);

// Called by pm::Pool at each persist point / after mapping a pool writable.
void RunPersistHook(const void* address, size_t length);
void RunMapHook(const uint8_t* base, size_t size, const char* path);
// Called by pm::Pool::Sync: true when TEST_FailNextSyncs asks this sync to fail.
bool TakeInjectedSyncFailure();

}  // namespace gpkv::pm
