// The body of the pool fuzzer, shared by the libFuzzer target
// (pool_fuzzer.cc, built by scripts/ci-fuzz.sh with clang) and the corpus
// replay test (fuzz_corpus_test.cc, built with the other tests).
//
// An input is the first bytes of a 1 MiB pool file (zero-padded or cut to
// 1 MiB: a pool's size must match its header, so the size is fixed). The body
// writes it to a file and runs what a user or operator would: verify, open
// (recovery), list / open every table, gets, a scan, a put + get round trip,
// create / drop of a table, then repair and verify again. Nothing may crash,
// hang or leak, and these must hold (a violation is returned as text):
//  - a put that returned OK is seen by a get (and an erase by a get);
//  - after a repair that returned OK, verify finds no corruption and the pool
//    opens.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "recovery/verify.h"
#include "tables/gphash/logged/core.h"

namespace gpkv::fuzz {

constexpr size_t kFuzzPoolSize = size_t{1} << 20;

inline Options FuzzOptions() {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = 1;
  return options;
}

inline bool WritePoolFile(const std::string& path, const uint8_t* data, size_t size) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  size_t length = std::min(size, kFuzzPoolSize);
  bool ok = length == 0 || ::write(fd, data, length) == static_cast<ssize_t>(length);
  ok = ok && ::ftruncate(fd, static_cast<off_t>(kFuzzPoolSize)) == 0;
  ::close(fd);
  return ok;
}

// Keys the seed pools hold (see MakeSeedPools) and a few more.
inline std::vector<uint8_t> ProbeKeys(uint32_t key_size, uint32_t count, uint64_t salt) {
  std::vector<uint8_t> keys(static_cast<size_t>(count) * key_size);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t w = 0; w < key_size; w += 8) {
      uint64_t word = (i + 1 + salt) * 0x9e3779b97f4a7c15ULL + w;
      std::memcpy(&keys[static_cast<size_t>(i) * key_size + w], &word, 8);
    }
  }
  return keys;
}

// Exercises one open table; returns a violation or "".
inline std::string ExerciseTable(Table& table) {
  const TableOptions& options = table.options();
  const uint32_t key_size = options.key_size, value_size = options.value_size;
  if (key_size == 0 || key_size % 8 != 0 || key_size > 32 || value_size == 0 || value_size > 128) {
    return "";  // an entry Open accepted with odd sizes: nothing to drive
  }
  table.Stats().status().IgnoreError();
  std::vector<uint8_t> keys = ProbeKeys(key_size, 64, 0);
  std::vector<uint8_t> values(64 * value_size), found(64);
  table.Get(keys, values, found).IgnoreError();
  uint64_t visited = 0;
  table.Scan([&](const uint8_t*, const uint8_t*) { return ++visited < 4096; }).IgnoreError();

  if (options.kind == TableKind::kOrdered) {
    std::vector<uint8_t> low(keys.begin(), keys.begin() + 4 * key_size);
    std::vector<uint8_t> high(keys.begin() + 4 * key_size, keys.begin() + 8 * key_size);
    std::vector<uint64_t> counts(4);
    table.Count(low, high, counts).IgnoreError();
    Table::RangeResults results;
    table.Range(low, high, &results).IgnoreError();
    std::vector<uint8_t> neighbours(4 * key_size), neighbour_values(4 * value_size), hits(4);
    table.Successor(low, neighbours, neighbour_values, hits).IgnoreError();
    table.Predecessor(low, neighbours, neighbour_values, hits).IgnoreError();
    BatchOptions limited;
    limited.range_limit = 2;
    table.Range(low, high, &results, limited).IgnoreError();
    // A short walk each way in pages of 3 pairs (forward and backward pages).
    IteratorOptions iterator_options;
    iterator_options.page_size = 3;
    auto iterator = table.NewIterator(iterator_options);
    if (iterator.ok()) {
      Iterator& it = **iterator;
      int steps = 0;
      for (it.SeekToFirst(); it.Valid() && steps < 16; it.Next()) ++steps;
      for (it.SeekToLast(); it.Valid() && steps < 32; it.Prev()) ++steps;
      it.Seek(ConstBytes(keys.data(), key_size));
      if (it.Valid()) it.Prev();
    }
  }

  // Round trip of keys no seed holds.
  std::vector<uint8_t> mine = ProbeKeys(key_size, 4, 1000003);
  std::vector<uint8_t> put_values(4 * value_size);
  for (size_t i = 0; i < put_values.size(); ++i) put_values[i] = static_cast<uint8_t>(i * 7 + 1);
  if (table.Put(mine, put_values).ok()) {
    std::vector<uint8_t> got(put_values.size()), got_found(4);
    Status status = table.Get(mine, got, got_found);
    if (status.ok() && (got != put_values || got_found != std::vector<uint8_t>(4, 1))) {
      return "a put that returned OK is not seen by the next get";
    }
    if (table.Erase(mine).ok()) {
      status = table.Get(mine, got, got_found);
      if (status.ok() && got_found != std::vector<uint8_t>(4, 0)) {
        return "an erase that returned OK is not seen by the next get";
      }
    }
  }
  return "";
}

// Runs one input; returns "" or the property it violated.
inline std::string RunPoolInput(const uint8_t* data, size_t size, const std::string& path) {
  if (!WritePoolFile(path, data, size)) return "";  // out of scratch space: not the pool's fault
  recovery::VerifyPool(path, nullptr).status().IgnoreError();
  {
    auto db = DB::Open(path, FuzzOptions());
    if (db.ok()) {
      (*db)->Info().status().IgnoreError();
      auto tables = (*db)->ListTables();
      if (tables.ok()) {
        size_t opened = 0;
        for (const TableInfo& info : *tables) {
          if (++opened > 4) break;
          auto table = (*db)->OpenTable(info.name);
          if (!table.ok()) continue;
          std::string violation = ExerciseTable(**table);
          if (!violation.empty()) return "table '" + info.name + "': " + violation;
        }
      }
      TableOptions probe;
      probe.expected_keys = 64;
      auto created = (*db)->CreateTable("fuzz-probe", probe);
      if (created.ok()) {
        std::string violation = ExerciseTable(**created);
        if (!violation.empty()) return "new table: " + violation;
        (*db)->DropTable("fuzz-probe").IgnoreError();
      }
    }
  }
  auto repaired = recovery::RepairPool(path, nullptr);
  if (repaired.ok()) {
    auto after = recovery::VerifyPool(path, nullptr);
    if (!after.ok()) return "verify after a successful repair: " + after.status().ToString();
    if (after->HasCorruption()) {
      return "verify after a successful repair finds corruption: " + after->findings[0].message;
    }
    auto db = DB::Open(path, FuzzOptions());
    if (!db.ok()) return "open after a successful repair: " + db.status().ToString();
  }
  return "";
}

// Valid pools of the current format, trimmed after their last nonzero byte
// (the fuzzer pads inputs back with zeros). Built at `scratch`.
inline std::vector<std::vector<uint8_t>> MakeSeedPools(const std::string& scratch) {
  struct Shape {
    uint32_t key_size, value_size, keys;
    bool erase_some, drop_one;
    bool ordered = false;
    uint32_t log_batches = 1;
    // Batches of 16 new keys, the pool's bytes read while the table is
    // open (a checkpoint in flight: records in both log halves).
    bool in_flight = false;
    // Hash: M of a logged table (0: in place).
    uint32_t hash_log_batches = 0;
  };
  const Shape shapes[] = {
      {8, 8, 0, false, false},     // empty table
      {8, 8, 200, true, false},    // inline values, resized, erased keys
      {8, 100, 120, true, true},   // value cells, updates, a dropped table
      {16, 24, 60, false, false},  // wide keys
      // An ordered (LSM) table, b = 16: runs on three levels, tombstones,
      // records in the write buffer's log.
      {8, 8, 120, true, false, true},
      // An ordered table whose log holds 4 batches of b: a flush of the log's
      // records, then an erase record (tombstones) and a put record.
      {8, 16, 150, true, false, true, 4},
      // A logged hash table, b = 16, M = 2: its 300 puts larger than the log
      // (the image), then an erase record in the log.
      {8, 8, 300, true, false, false, 1, false, 2},
      // An ordered table with M = 4 caught with a checkpoint in flight: its
      // run written, its manifest not yet published, records in both halves
      // of the log.
      {8, 8, 80, false, false, true, 4, true},
      // A logged hash table, b = 16, M = 8, caught with a checkpoint in
      // flight: 16 batches of 16 puts, the 15th finds half 0 full (its image
      // written, not yet published), records in both halves of the log.
      {8, 8, 256, false, false, false, 1, true, 8},
  };
  // The images written on the batch's thread: the bytes read while a
  // checkpoint is in flight are the same at every run.
  gphash::logged::TEST_WriteImagesInline(true);
  std::vector<std::vector<uint8_t>> seeds;
  for (const Shape& shape : shapes) {
    ::unlink(scratch.c_str());
    Options options = FuzzOptions();
    options.create_if_missing = true;
    options.pool_size = kFuzzPoolSize;
    std::vector<uint8_t> bytes(kFuzzPoolSize);
    auto read_pool = [&] {
      int fd = ::open(scratch.c_str(), O_RDONLY);
      if (fd < 0) return false;
      ssize_t got = ::read(fd, bytes.data(), bytes.size());
      ::close(fd);
      return got == static_cast<ssize_t>(bytes.size());
    };
    bool read = false;
    {
      auto db = DB::Open(scratch, options);
      if (!db.ok()) continue;
      if (shape.drop_one) {
        TableOptions doomed;
        doomed.expected_keys = 64;
        (*db)->CreateTable("dropped", doomed).status().IgnoreError();
      }
      TableOptions table_options;
      table_options.key_size = shape.key_size;
      table_options.value_size = shape.value_size;
      table_options.expected_keys = 64;
      if (shape.ordered) {
        table_options.kind = TableKind::kOrdered;
        table_options.ordered.batch_entries = 16;
        table_options.ordered.log_batches = shape.log_batches;
      }
      if (shape.hash_log_batches != 0) {
        table_options.hash_log.batch_entries = 16;
        table_options.hash_log.log_batches = shape.hash_log_batches;
      }
      auto table = (*db)->CreateTable("seed", table_options);
      if (!table.ok()) continue;
      std::vector<uint8_t> keys = ProbeKeys(shape.key_size, shape.keys, 0);
      std::vector<uint8_t> values(static_cast<size_t>(shape.keys) * shape.value_size);
      for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i * 13 + 5);
      if (shape.in_flight) {
        // Batches of b = 16 (ordered, M = 4: five, the fourth starts a
        // checkpoint, the fifth is the second batch of the other half,
        // published before the third; logged hash, M = 8: sixteen, the 15th
        // starts one, published from the 6th batch of its half on).
        for (uint32_t at = 0; at + 16 <= shape.keys; at += 16) {
          (*table)
              ->Put(ConstBytes(keys.data() + at * shape.key_size, 16 * shape.key_size),
                    ConstBytes(values.data() + at * shape.value_size, 16 * shape.value_size))
              .IgnoreError();
        }
        read = read_pool();
        if (!read) continue;
      } else if (shape.keys > 0) {
        (*table)->Put(keys, values).IgnoreError();
      }
      if (shape.keys > 0 && shape.value_size > 8) {
        // Update half of them: new cells, the old ones free.
        size_t half = shape.keys / 2;
        std::vector<uint8_t> update(values.begin(), values.begin() + half * shape.value_size);
        for (uint8_t& byte : update) byte ^= 0x5a;
        (*table)->Put(ConstBytes(keys.data(), half * shape.key_size), update).IgnoreError();
      }
      if (shape.erase_some) {
        (*table)->Erase(ConstBytes(keys.data(), keys.size() / 4)).IgnoreError();
      }
      if (shape.ordered && !shape.in_flight) {  // a small batch: it stays in the log
        (*table)
            ->Put(ConstBytes(keys.data(), 3 * shape.key_size),
                  ConstBytes(values.data(), 3 * shape.value_size))
            .IgnoreError();
      }
      if (shape.drop_one) (*db)->DropTable("dropped").IgnoreError();
    }
    if (!read && !read_pool()) continue;
    size_t end = bytes.size();
    while (end > 0 && bytes[end - 1] == 0) --end;
    bytes.resize(end);
    seeds.push_back(std::move(bytes));
  }
  ::unlink(scratch.c_str());
  gphash::logged::TEST_WriteImagesInline(false);
  return seeds;
}

}  // namespace gpkv::fuzz
