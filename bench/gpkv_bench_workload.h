// Workload generation for gpkv-bench: record keys and values, YCSB's key
// choosers (scrambled zipfian, latest, uniform) and the batches of operations
// every driver is fed.
//
// Everything here is a pure function of (seed, workload, position): two runs
// with the same seed, or two systems in one run, see the same operations in
// the same order. The generators use only std::mt19937_64's raw output (whose
// sequence the standard fixes) and their own arithmetic, never a standard
// distribution (whose results differ between standard libraries).
//
// Header-only so that the tests under tests/bench/ can use it without the
// tool's sources. Who may call: bench/ and tests/bench/.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace gpkv::bench {

// ---- records: keys and values -------------------------------------------

// splitmix64's finalizer: a bijection on 64-bit words.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Record numbers at or above this are never inserted: negative searches use
// them.
constexpr uint64_t kAbsentRecordBase = uint64_t{1} << 63;

// Writes the key of `record` (key_size bytes, a multiple of 8 or less than 8).
// The first word is a bijection of the record number, so distinct records have
// distinct keys; the keys look random, so sequential records land in random
// buckets of any hash table.
inline void EncodeKey(uint64_t record, uint64_t seed, uint32_t key_size, uint8_t* out) {
  uint64_t word = Mix64(record ^ Mix64(seed ^ 0x6b65797300000000ULL));
  for (uint32_t offset = 0; offset < key_size; offset += 8) {
    uint32_t bytes = key_size - offset < 8 ? key_size - offset : 8;
    std::memcpy(out + offset, &word, bytes);
    word = Mix64(word + 0x9e3779b97f4a7c15ULL);
  }
}

// Writes the value of `record` at `version` (value_size bytes).
inline void EncodeValue(uint64_t record, uint64_t version, uint32_t value_size, uint8_t* out) {
  uint64_t word = Mix64(Mix64(record) ^ (version * 0x9e3779b97f4a7c15ULL) ^ 0x76616c7565ULL);
  for (uint32_t offset = 0; offset < value_size; offset += 8) {
    uint32_t bytes = value_size - offset < 8 ? value_size - offset : 8;
    std::memcpy(out + offset, &word, bytes);
    word = Mix64(word + 0x9e3779b97f4a7c15ULL);
  }
}

// The "modify" of a read-modify-write: adds one to the first min(8, size)
// bytes read as a little-endian integer. Two RMWs of one key in one batch read
// the same (pre-batch) value and so write the same value, in any order.
inline void ModifyValue(uint8_t* value, uint32_t value_size) {
  uint64_t word = 0;
  uint32_t bytes = value_size < 8 ? value_size : 8;
  std::memcpy(&word, value, bytes);
  ++word;
  std::memcpy(value, &word, bytes);
}

// An order-independent digest of read results: the sum over reads of a hash
// of (found, value). Equal digests mean (with high probability) that two
// systems returned the same multiset of answers to the same reads.
inline uint64_t ReadResultHash(bool found, const uint8_t* value, uint32_t value_size) {
  if (!found) return 0x6e6f74666f756e64ULL;  // "notfound"
  uint64_t h = 0x666f756e64ULL;
  for (uint32_t offset = 0; offset < value_size; offset += 8) {
    uint64_t word = 0;
    std::memcpy(&word, value + offset, value_size - offset < 8 ? value_size - offset : 8);
    h = Mix64(h ^ word);
  }
  return h;
}

// ---- random numbers ---------------------------------------------------------

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  uint64_t Next() { return engine_(); }
  // Uniform in [0, 1) with 53 bits.
  double NextDouble() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n), n > 0 (multiply-high: bias below 2^-64 * n).
  uint64_t Uniform(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(engine_()) * n) >> 64);
  }

 private:
  std::mt19937_64 engine_;
};

// ---- YCSB key choosers -------------------------------------------------------

// YCSB's ZipfianGenerator (Gray et al., "Quickly Generating Billion-Record
// Synthetic Databases", SIGMOD 1994): item i of [min, max] has probability
// proportional to 1 / (i - min + 1)^theta; item min is the most popular. The
// item count may grow between draws (zeta is extended incrementally, as
// YCSB does).
class ZipfianGenerator {
 public:
  static constexpr double kYcsbTheta = 0.99;

  ZipfianGenerator(uint64_t min, uint64_t max, double theta = kYcsbTheta)
      : ZipfianGenerator(min, max, theta, Zeta(0, max - min + 1, theta, 0.0)) {}
  // With zeta(items) known in advance (the scrambled generator's constant).
  ZipfianGenerator(uint64_t min, uint64_t max, double theta, double zetan)
      : items_(max - min + 1),
        base_(min),
        theta_(theta),
        zeta2theta_(Zeta(0, 2, theta, 0.0)),
        alpha_(1.0 / (1.0 - theta)),
        zetan_(zetan),
        count_for_zeta_(items_) {
    eta_ = Eta(items_);
  }

  // A draw over the first `item_count` items (YCSB nextLong(itemcount)).
  uint64_t Next(Random& random, uint64_t item_count) {
    if (item_count > count_for_zeta_) {
      zetan_ = Zeta(count_for_zeta_, item_count, theta_, zetan_);
      count_for_zeta_ = item_count;
      eta_ = Eta(item_count);
    }
    double u = random.NextDouble();
    double uz = u * zetan_;
    if (uz < 1.0) return base_;
    if (uz < 1.0 + std::pow(0.5, theta_)) return base_ + 1;
    auto offset = static_cast<uint64_t>(static_cast<double>(item_count) *
                                        std::pow(eta_ * u - eta_ + 1.0, alpha_));
    if (offset >= item_count) offset = item_count - 1;
    return base_ + offset;
  }
  uint64_t Next(Random& random) { return Next(random, items_); }

  double zetan() const { return zetan_; }

  // sum_{i=from}^{to-1} 1 / (i + 1)^theta, added to initial_sum.
  static double Zeta(uint64_t from, uint64_t to, double theta, double initial_sum) {
    double sum = initial_sum;
    for (uint64_t i = from; i < to; ++i) sum += 1.0 / std::pow(static_cast<double>(i + 1), theta);
    return sum;
  }

 private:
  double Eta(uint64_t item_count) const {
    return (1.0 - std::pow(2.0 / static_cast<double>(item_count), 1.0 - theta_)) /
           (1.0 - zeta2theta_ / zetan_);
  }

  uint64_t items_;
  uint64_t base_;
  double theta_;
  double zeta2theta_;
  double alpha_;
  double zetan_;
  double eta_ = 0.0;
  uint64_t count_for_zeta_;
};

// YCSB's 64-bit FNV-1a over the 8 bytes of a value (Utils.fnvhash64), with
// Java's Math.abs of the signed result.
inline uint64_t FnvHash64(uint64_t value) {
  uint64_t hash = 0xCBF29CE484222325ULL;
  for (int i = 0; i < 8; ++i) {
    hash ^= value & 0xff;
    value >>= 8;
    hash *= 1099511628211ULL;
  }
  if (static_cast<int64_t>(hash) < 0) hash = ~hash + 1;  // Math.abs (MIN stays MIN)
  return hash;
}

// YCSB's ScrambledZipfianGenerator: a zipfian over 10^10 items with YCSB's
// precomputed zeta for theta 0.99, hashed (FNV-1a) onto [min, max], so the
// popular items are scattered over the key space instead of clustered at min.
class ScrambledZipfianGenerator {
 public:
  static constexpr uint64_t kItemCount = 10000000000ULL;
  static constexpr double kZetan = 26.46902820178302;  // zeta(10^10 + 1, 0.99), YCSB's constant

  ScrambledZipfianGenerator(uint64_t min, uint64_t max)
      : min_(min), item_count_(max - min + 1), zipfian_(0, kItemCount, 0.99, kZetan) {}

  uint64_t Next(Random& random) { return min_ + FnvHash64(zipfian_.Next(random)) % item_count_; }

 private:
  uint64_t min_;
  uint64_t item_count_;
  ZipfianGenerator zipfian_;
};

// YCSB's SkewedLatestGenerator: the most recently inserted records are the
// most popular. Draws record (count - 1) - zipfian(count) over the `count`
// records inserted so far. (YCSB returns max - zipfian(max) with max the last
// record number, which never picks record 0; this picks from all `count`.)
class LatestGenerator {
 public:
  explicit LatestGenerator(uint64_t count) : zipfian_(0, count - 1) {}
  uint64_t Next(Random& random, uint64_t count) {
    return (count - 1) - zipfian_.Next(random, count);
  }

 private:
  ZipfianGenerator zipfian_;
};

// ---- workloads ----------------------------------------------------------------

// How the record of a read / update / RMW is chosen.
enum class KeyChoice : uint8_t {
  kZipfian,  // YCSB scrambled zipfian over the records present (theta 0.99)
  kUniform,  // uniform over the records present
  kLatest,   // YCSB latest: zipfian over records by recency
  kAbsent,   // records never inserted (negative search)
  kCursor,   // records 0, 1, 2, ... each once (delete: every key distinct)
};

const char* KeyChoiceName(KeyChoice choice);

// A workload: the mix of operations and how their records are chosen.
// Proportions add up to 1. Inserts always write new records (the next record
// number), as YCSB's insert order.
struct WorkloadSpec {
  std::string name;         // "A", "B", "C", "D", "F", "LOAD", "search+", ...
  std::string description;  // "50% read / 50% update"
  double read = 0.0;
  double update = 0.0;
  double insert = 0.0;
  double read_modify_write = 0.0;
  double erase = 0.0;
  KeyChoice key_choice = KeyChoice::kUniform;
  // LOAD and insert: the run inserts the table's records (ops = records)
  // instead of running `ops` operations.
  bool is_load = false;
};

// YCSB core workload by letter ("A", "B", "C", "D", "F", "LOAD"), with
// `choice` (kZipfian or kUniform) for the key choice of A, B, C, F; D always
// reads the latest records. Returns false for an unknown name.
bool YcsbWorkload(const std::string& name, KeyChoice choice, WorkloadSpec* spec);

// Micro workload by name: "insert" (load), "search+", "search-", "update",
// "delete". Returns false for an unknown name.
bool MicroWorkload(const std::string& name, WorkloadSpec* spec);

// The operations of one batch, split by kind. A batch runs as: every read
// (reads, then the reads of the RMWs) against the state before the batch;
// then one write (updates, inserts, then the RMW writes, whose values are the
// values read, modified); then the erases. Updates write the value of
// (record, batch number), so duplicate keys in a batch write equal values and
// the result does not depend on the order a system applies them in.
struct OpBatch {
  uint64_t batch_number = 0;
  uint64_t ops = 0;
  size_t reads = 0;  // plain reads; the RMW reads follow them in read_keys
  size_t read_modify_writes = 0;
  size_t updates = 0;
  size_t inserts = 0;
  size_t erases = 0;
  std::vector<uint8_t> read_keys;     // (reads + rmw) * key_size
  std::vector<uint8_t> write_keys;    // (updates + inserts + rmw) * key_size
  std::vector<uint8_t> write_values;  // (updates + inserts) * value_size; RMW values appended
  std::vector<uint8_t> erase_keys;    // erases * key_size

  size_t read_count() const { return reads + read_modify_writes; }
  size_t write_count() const { return updates + inserts + read_modify_writes; }
};

// Records present in a table as a run goes on: the generator's only state
// shared between the workloads of one system.
struct RecordState {
  uint64_t inserted = 0;      // records 0 .. inserted-1 were inserted
  uint64_t erase_cursor = 0;  // records below this were erased (kCursor)
};

// Generates the batches of one workload run. Deterministic in (seed, spec,
// state at construction).
class BatchGenerator {
 public:
  BatchGenerator(const WorkloadSpec& spec, uint32_t key_size, uint32_t value_size,
                 uint64_t key_seed, uint64_t run_seed, RecordState* state);

  // Fills `batch` with the next min(batch_size, remaining) operations.
  void Next(uint64_t batch_size, OpBatch* batch);

 private:
  uint64_t ChooseRecord();

  WorkloadSpec spec_;
  uint32_t key_size_;
  uint32_t value_size_;
  uint64_t key_seed_;
  Random random_;
  RecordState* state_;
  uint64_t records_at_start_;
  uint64_t records_at_batch_start_ = 0;
  uint64_t batch_number_ = 0;
  ScrambledZipfianGenerator scrambled_;
  std::optional<LatestGenerator> latest_;  // only for kLatest: its zeta costs O(records)
};

// ---- inline definitions ---------------------------------------------------------

inline const char* KeyChoiceName(KeyChoice choice) {
  switch (choice) {
    case KeyChoice::kZipfian:
      return "zipfian";
    case KeyChoice::kUniform:
      return "uniform";
    case KeyChoice::kLatest:
      return "latest";
    case KeyChoice::kAbsent:
      return "absent";
    case KeyChoice::kCursor:
      return "each-once";
  }
  return "?";
}

inline bool YcsbWorkload(const std::string& name, KeyChoice choice, WorkloadSpec* spec) {
  WorkloadSpec s;
  s.name = name;
  s.key_choice = choice;
  if (name == "A") {
    s.read = 0.5, s.update = 0.5, s.description = "50% read / 50% update";
  } else if (name == "B") {
    s.read = 0.95, s.update = 0.05, s.description = "95% read / 5% update";
  } else if (name == "C") {
    s.read = 1.0, s.description = "100% read";
  } else if (name == "D") {
    s.read = 0.95, s.insert = 0.05, s.key_choice = KeyChoice::kLatest;
    s.description = "95% read latest / 5% insert";
  } else if (name == "F") {
    s.read = 0.5, s.read_modify_write = 0.5, s.description = "50% read / 50% read-modify-write";
  } else if (name == "LOAD") {
    s.insert = 1.0, s.is_load = true, s.description = "100% insert (load)";
  } else {
    return false;
  }
  *spec = s;
  return true;
}

inline bool MicroWorkload(const std::string& name, WorkloadSpec* spec) {
  WorkloadSpec s;
  s.name = name;
  if (name == "insert") {
    s.insert = 1.0, s.is_load = true, s.description = "insert distinct new keys (load)";
  } else if (name == "search+") {
    s.read = 1.0, s.key_choice = KeyChoice::kUniform, s.description = "get present keys";
  } else if (name == "search-") {
    s.read = 1.0, s.key_choice = KeyChoice::kAbsent, s.description = "get absent keys";
  } else if (name == "update") {
    s.update = 1.0, s.key_choice = KeyChoice::kUniform, s.description = "put present keys";
  } else if (name == "delete") {
    s.erase = 1.0, s.key_choice = KeyChoice::kCursor, s.description = "erase distinct present keys";
  } else {
    return false;
  }
  *spec = s;
  return true;
}

inline BatchGenerator::BatchGenerator(const WorkloadSpec& spec, uint32_t key_size,
                                      uint32_t value_size, uint64_t key_seed, uint64_t run_seed,
                                      RecordState* state)
    : spec_(spec),
      key_size_(key_size),
      value_size_(value_size),
      key_seed_(key_seed),
      random_(Mix64(run_seed)),
      state_(state),
      records_at_start_(state->inserted),
      scrambled_(0, state->inserted > 0 ? state->inserted - 1 : 0) {
  if (spec.key_choice == KeyChoice::kLatest)
    latest_.emplace(state->inserted > 0 ? state->inserted : 1);
}

inline uint64_t BatchGenerator::ChooseRecord() {
  switch (spec_.key_choice) {
    case KeyChoice::kZipfian:
      return scrambled_.Next(random_);
    case KeyChoice::kUniform:
      return random_.Uniform(records_at_start_ > 0 ? records_at_start_ : 1);
    case KeyChoice::kLatest:
      return latest_->Next(random_, records_at_batch_start_ > 0 ? records_at_batch_start_ : 1);
    case KeyChoice::kAbsent:
      return kAbsentRecordBase + (random_.Next() >> 1);
    case KeyChoice::kCursor:
      return state_->erase_cursor++;
  }
  return 0;
}

inline void BatchGenerator::Next(uint64_t batch_size, OpBatch* batch) {
  records_at_batch_start_ = state_->inserted;
  batch->batch_number = batch_number_;
  batch->ops = batch_size;
  batch->reads = batch->read_modify_writes = batch->updates = batch->inserts = batch->erases = 0;
  batch->read_keys.clear();
  batch->write_keys.clear();
  batch->write_values.clear();
  batch->erase_keys.clear();
  // Records by kind first, then keys in the batch's execution order.
  std::vector<uint64_t> reads, rmws, updates, inserts, erases;
  const double read_end = spec_.read;
  const double update_end = read_end + spec_.update;
  const double insert_end = update_end + spec_.insert;
  const double rmw_end = insert_end + spec_.read_modify_write;
  for (uint64_t i = 0; i < batch_size; ++i) {
    double u = spec_.is_load ? 1.0 : random_.NextDouble();
    if (spec_.is_load) {
      inserts.push_back(state_->inserted++);
    } else if (u < read_end) {
      reads.push_back(ChooseRecord());
    } else if (u < update_end) {
      updates.push_back(ChooseRecord());
    } else if (u < insert_end) {
      inserts.push_back(state_->inserted++);
    } else if (u < rmw_end) {
      rmws.push_back(ChooseRecord());
    } else {
      erases.push_back(ChooseRecord());
    }
  }
  batch->reads = reads.size();
  batch->read_modify_writes = rmws.size();
  batch->updates = updates.size();
  batch->inserts = inserts.size();
  batch->erases = erases.size();
  auto append_keys = [&](const std::vector<uint64_t>& records, std::vector<uint8_t>* out) {
    size_t at = out->size();
    out->resize(at + records.size() * key_size_);
    for (size_t i = 0; i < records.size(); ++i) {
      EncodeKey(records[i], key_seed_, key_size_, out->data() + at + i * key_size_);
    }
  };
  auto append_values = [&](const std::vector<uint64_t>& records, uint64_t version) {
    size_t at = batch->write_values.size();
    batch->write_values.resize(at + records.size() * value_size_);
    for (size_t i = 0; i < records.size(); ++i) {
      EncodeValue(records[i], version, value_size_,
                  batch->write_values.data() + at + i * value_size_);
    }
  };
  append_keys(reads, &batch->read_keys);
  append_keys(rmws, &batch->read_keys);
  append_keys(updates, &batch->write_keys);
  append_keys(inserts, &batch->write_keys);
  append_keys(rmws, &batch->write_keys);
  append_keys(erases, &batch->erase_keys);
  // Version 0 is the loaded value; the updates of a batch write one version
  // drawn for the batch, so every run and batch writes values of its own.
  append_values(updates, Mix64(random_.Next()) | 1);
  append_values(inserts, 0);
  ++batch_number_;
}

}  // namespace gpkv::bench
