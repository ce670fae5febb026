// The registry of systems `gpkv bench` can measure.
#include "bench/gpkv_bench_driver.h"

#include <utility>

namespace gpkv::bench {
namespace {

std::vector<DriverInfo>& Registry() {
  static std::vector<DriverInfo>* registry = [] {
    auto* drivers = new std::vector<DriverInfo>;
    drivers->push_back({"gpkv",
                        "durable per batch (SyncMode::kBatch: pool persisted before return)",
                        CreateGpkvDriver});
    drivers->push_back({"libcuckoo", "volatile (DRAM, nothing persisted)", CreateCuckooDriver});
    return drivers;
  }();
  return *registry;
}

}  // namespace

void RegisterDriver(DriverInfo info) {
  for (DriverInfo& existing : Registry()) {
    if (existing.name == info.name) {
      existing = std::move(info);
      return;
    }
  }
  Registry().push_back(std::move(info));
}

const std::vector<DriverInfo>& RegisteredDrivers() { return Registry(); }

const DriverInfo* FindDriver(const std::string& name) {
  for (const DriverInfo& info : Registry()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace gpkv::bench
