#include "util/epoch.h"

#include <thread>

namespace gpkv::util {

int EpochManager::Enter() {
  // Start at a per-thread spot so concurrent batches rarely contend.
  static thread_local int hint =
      static_cast<int>(std::hash<std::thread::id>()(std::this_thread::get_id()) % kRecords);
  for (;;) {
    for (int i = 0; i < kRecords; ++i) {
      int index = (hint + i) % kRecords;
      uint64_t expected = 0;
      // A stale (lower) epoch only delays reclamation: always safe.
      if (records_[index].epoch.compare_exchange_strong(expected, Current(),
                                                        std::memory_order_seq_cst)) {
        hint = index;
        return index;
      }
    }
    std::this_thread::yield();
  }
}

void EpochManager::Leave(int ticket) { records_[ticket].epoch.store(0, std::memory_order_seq_cst); }

uint64_t EpochManager::SafeBound() const {
  uint64_t bound = Current() + 1;
  for (const Record& record : records_) {
    uint64_t epoch = record.epoch.load(std::memory_order_seq_cst);
    if (epoch != 0 && epoch < bound) bound = epoch;
  }
  return bound;
}

}  // namespace gpkv::util
