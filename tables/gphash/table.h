// engine::PersistentHashTable: the gpkv::Table of a persistent hash table.
// Checks every batch's spans against the table's sizes, then hands the batch
// to its backend: cpu::Gphash, or gpu::GphashGpu in a CUDA build. Both read
// and write the same bytes. Thread-safe as gpkv::Table promises: the backends
// handle concurrent batches.
#pragma once

#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/gphash/cpu/backend.h"
#if GPKV_HAVE_CUDA
#include "tables/gphash/gpu/backend.h"
#endif

namespace gpkv::engine {

class PersistentHashTable final : public Table {
 public:
  PersistentHashTable(std::string name, TableOptions options, std::string pool_path, bool read_only,
                      std::unique_ptr<cpu::Gphash> backend);
#if GPKV_HAVE_CUDA
  PersistentHashTable(std::string name, TableOptions options, std::string pool_path, bool read_only,
                      std::unique_ptr<gpu::GphashGpu> backend);
#endif

  const std::string& name() const override { return name_; }
  const TableOptions& options() const override { return options_; }
  Status Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) override;
  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
             const BatchOptions& options) override;
  Status Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) override;
  Result<TableStats> Stats() override;
  Status Scan(const ScanVisitor& visit) override;

 private:
  // InvalidArgument naming the table unless keys holds whole keys; sets *count.
  Status CheckKeys(ConstBytes keys, size_t* count) const;
  Status CheckSize(const char* what, size_t actual, size_t expected, const void* data) const;
  Status CheckWritable() const;

  const std::string name_;
  const TableOptions options_;
  const std::string pool_path_;
  const bool read_only_;
  std::unique_ptr<cpu::Gphash> cpu_;  // exactly one of cpu_ / gpu_ is set
#if GPKV_HAVE_CUDA
  std::unique_ptr<gpu::GphashGpu> gpu_;
#endif
};

}  // namespace gpkv::engine
