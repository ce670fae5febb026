// A per-key history checker for concurrent batches.
//
// Every operation is recorded with its invocation and response times (ticks
// of one global counter taken just before the batch call and just after it
// returns, so "A returned before B was invoked" implies A.respond <
// B.invoke) and the value it wrote or read. Each write writes a value no
// other write writes (an id), so a read names the write it saw.
//
// The rule checked, per key: a read returns the value of some write that is
// either overlapping the read or the latest one preceding it. Precisely, a
// read R that returns the value of write W is legal iff
//   W.invoke < R.respond                       (W had begun before R ended), and
//   no write W2 of the key has W.respond < W2.invoke and W2.respond < R.invoke
//                                              (W was not overwritten before R began).
// A read that finds nothing must be legal for the initial state (a virtual
// erase at time 0) or for some erase of the key. A read whose bytes match no
// write at all (a torn value) is a violation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpkv::concurrency {

constexpr uint64_t kAbsent = 0;    // value id of "no value" (erase, not found)
constexpr uint64_t kTorn = ~0ULL;  // value id of bytes no write wrote

struct Event {
  uint64_t key;
  uint64_t value_id;  // kAbsent for erase / not found
  uint64_t invoke;
  uint64_t respond;
};

struct Violation {
  Event read;
  std::string why;
};

class HistoryChecker {
 public:
  void AddWrite(const Event& event) { writes_.push_back(event); }
  void AddRead(const Event& event) { reads_.push_back(event); }
  void AddWrites(const std::vector<Event>& events) {
    writes_.insert(writes_.end(), events.begin(), events.end());
  }
  void AddReads(const std::vector<Event>& events) {
    reads_.insert(reads_.end(), events.begin(), events.end());
  }

  uint64_t writes() const { return writes_.size(); }
  uint64_t reads() const { return reads_.size(); }

  // Checks every read; returns the violations (at most `limit` kept, all counted).
  std::vector<Violation> Check(uint64_t* violation_count, size_t limit = 10) {
    Index();
    std::vector<Violation> violations;
    *violation_count = 0;
    for (const Event& read : reads_) {
      std::string why = CheckRead(read);
      if (why.empty()) continue;
      ++*violation_count;
      if (violations.size() < limit) violations.push_back(Violation{read, why});
    }
    return violations;
  }

  // The writes of `key` around [from, to], one per line, for a failure message.
  std::string Around(uint64_t key, uint64_t from, uint64_t to, size_t most = 8) const {
    auto key_it = by_key_.find(key);
    if (key_it == by_key_.end()) return "  (no writes of this key)\n";
    std::string text;
    const std::vector<Event>& list = key_it->second.writes;  // sorted by invoke
    size_t end = 0;
    while (end < list.size() && list[end].invoke <= to) ++end;
    for (size_t i = end > most ? end - most : 0; i < end; ++i) {
      const Event& write = list[i];
      if (write.respond + 200 < from) continue;
      text += "  " + std::string(write.value_id == kAbsent ? "erase" : "write ") +
              std::to_string(write.value_id) + " [" + std::to_string(write.invoke) + ", " +
              std::to_string(write.respond) + "]\n";
    }
    return text;
  }

 private:
  struct KeyHistory {
    std::vector<Event> writes;          // sorted by invoke
    std::vector<uint64_t> min_respond;  // min respond over writes[i..]
    std::vector<size_t> erases;         // indexes of erases in writes
  };

  void Index() {
    by_key_.clear();
    by_value_.clear();
    for (const Event& write : writes_) by_key_[write.key].writes.push_back(write);
    for (auto& [key, history] : by_key_) {
      auto& list = history.writes;
      std::sort(list.begin(), list.end(),
                [](const Event& a, const Event& b) { return a.invoke < b.invoke; });
      history.min_respond.assign(list.size() + 1, ~0ULL);
      for (size_t i = list.size(); i-- > 0;) {
        history.min_respond[i] = std::min(history.min_respond[i + 1], list[i].respond);
      }
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i].value_id == kAbsent) {
          history.erases.push_back(i);
        } else {
          by_value_[list[i].value_id] = {key, i};
        }
      }
    }
  }

  // True if some write of `history` begins after `after_respond` and ends
  // before `before_invoke`: whatever was written up to after_respond was
  // overwritten before the read began.
  static bool OverwrittenBetween(const KeyHistory& history, uint64_t after_respond,
                                 uint64_t before_invoke) {
    auto first =
        std::upper_bound(history.writes.begin(), history.writes.end(), after_respond,
                         [](uint64_t time, const Event& write) { return time < write.invoke; });
    size_t index = static_cast<size_t>(first - history.writes.begin());
    return history.min_respond[index] < before_invoke;
  }

  std::string CheckRead(const Event& read) const {
    static const KeyHistory kEmpty{{}, {~0ULL}, {}};
    auto key_it = by_key_.find(read.key);
    const KeyHistory& history = key_it == by_key_.end() ? kEmpty : key_it->second;
    if (read.value_id == kTorn) return "read bytes that no write wrote (torn or foreign value)";
    if (read.value_id != kAbsent) {
      auto value_it = by_value_.find(read.value_id);
      if (value_it == by_value_.end() || value_it->second.first != read.key) {
        return "read a value that no write of this key wrote";
      }
      const Event& write = history.writes[value_it->second.second];
      if (write.invoke >= read.respond) return "read a value written only after the read returned";
      if (OverwrittenBetween(history, write.respond, read.invoke)) {
        return "read a stale value: a later write had completed before the read began";
      }
      return "";
    }
    // Not found: the initial state, or an erase.
    if (!OverwrittenBetween(history, 0, read.invoke)) return "";
    for (size_t index : history.erases) {
      const Event& erase = history.writes[index];
      if (erase.invoke >= read.respond) break;  // sorted by invoke
      if (!OverwrittenBetween(history, erase.respond, read.invoke)) return "";
    }
    return "found nothing, but a write had completed before the read began and no erase "
           "overlaps or follows it";
  }

  std::vector<Event> writes_;
  std::vector<Event> reads_;
  std::unordered_map<uint64_t, KeyHistory> by_key_;
  std::unordered_map<uint64_t, std::pair<uint64_t, size_t>> by_value_;
};

}  // namespace gpkv::concurrency
