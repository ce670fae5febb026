// engine::CheckedTable: the gpkv::Table the DB hands out. Checks every
// batch's spans against the table's key and value sizes (and writes against
// a read-only pool) once, for every family, then passes the batch to the
// family's table, and that a batch's snapshot (BatchOptions::snapshot) was
// taken by this table, and only for a read. Errors name the pool file and the table. Stats() says
// which backend and device run the table and, when the engine fell back to
// the CPU backend, why (TableStats::backend, device, fallback). An async
// batch (BatchOptions::async) needs a stream; the family decides whether it
// queues (tables::HashBackend) or runs it to completion.
// Close closes and destroys the family's table; every later call returns
// InvalidArgument. A family's hook reaches its own table behind it as a
// tables::TableFacade (tables/table_facade.h).
//
// Thread safety: as the family's table (gpkv::Table's contract); the checks
// keep no state. Close runs alone (gpkv::Table::Close's contract).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/table_facade.h"

namespace gpkv::engine {

class CheckedTable final : public Table, public tables::TableFacade {
 public:
  // `backend`: "cpu" or "cuda", where the family's table runs, on CUDA
  // device `device` (-1 on the CPU); `fallback`: empty, or the engine's
  // message on why it runs on the CPU backend.
  CheckedTable(std::string pool_path, bool read_only, std::string backend, int device,
               std::string fallback, std::unique_ptr<Table> family_table);

  const std::string& name() const override { return name_; }
  const TableOptions& options() const override { return options_; }
  Status Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) override;
  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
             const BatchOptions& options) override;
  Status Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) override;
  // Also checks that ops holds one WriteOp per key.
  Status Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
               const BatchOptions& options) override;
  Status Count(ConstBytes lo, ConstBytes hi, MutableBytes counts,
               const BatchOptions& options) override;
  Status Range(ConstBytes lo, ConstBytes hi, RangeResults* results,
               const BatchOptions& options) override;
  Status RangeOnDevice(ConstBytes lo, ConstBytes hi, DeviceRangeResults* results,
                       const BatchOptions& options) override;
  Status Successor(ConstBytes keys, MutableBytes next_keys, MutableBytes values, MutableBytes found,
                   const BatchOptions& options) override;
  Status Predecessor(ConstBytes keys, MutableBytes previous_keys, MutableBytes values,
                     MutableBytes found, const BatchOptions& options) override;
  // Checks the bounds, page size and snapshot; the family's table makes it.
  Result<std::unique_ptr<Iterator>> NewIterator(const IteratorOptions& options) override;
  Status Compact() override;
  Result<std::unique_ptr<Snapshot>> TakeSnapshot() override;
  Result<TableStats> Stats() override;
  Status Synchronize(void* stream) override;
  Status Scan(const ScanVisitor& visit) override;
  Status Close() override;
  bool closed() const { return table_ == nullptr; }
  Table* family_table() const override { return table_.get(); }

 private:
  // InvalidArgument naming the table unless keys holds whole keys; sets *count.
  Status CheckKeys(ConstBytes keys, size_t* count) const;
  Status CheckSize(const char* what, size_t actual, size_t expected, const void* data) const;
  // InvalidArgument naming the table once it is closed.
  Status CheckOpen() const;
  // CheckOpen, then InvalidArgument on a read-only pool.
  Status CheckWritable() const;
  // lo and hi: the same number of whole keys; sets *count.
  Status CheckBounds(ConstBytes lo, ConstBytes hi, size_t* count) const;
  // InvalidArgument unless options.snapshot is null or was taken by this
  // table (reads), or unless it is null (writes).
  Status CheckSnapshot(const BatchOptions& options, bool write) const;
  // InvalidArgument for an async batch (BatchOptions::async) without a
  // stream (Put, Get, Erase).
  Status CheckAsync(const BatchOptions& options) const;
  // Successor / Predecessor outputs for `count` keys.
  Status CheckNeighbours(size_t count, MutableBytes keys, MutableBytes values,
                         MutableBytes found) const;
  std::string Where() const;

  const std::string pool_path_;
  const bool read_only_;
  const std::string name_;
  const TableOptions options_;
  const std::string backend_;
  const int device_;
  const std::string fallback_;
  std::unique_ptr<Table> table_;  // null once closed
};

}  // namespace gpkv::engine
