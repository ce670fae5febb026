// tables::HashFamilyTable: the front of a hash family (tables/<family>/
// table.h) over the backend chosen at open: Put, Get and Erase go to the
// backend's batch of the same name (tables::HashBackend), one virtual call
// each, with the batch's stream; with BatchOptions::async to the backend's
// Async twin, which queues or runs to completion as the backend can.
// Synchronize and Close wait for what the backend queued. A family's front
// derives from it with its Backend and adds Stats and Scan.
//
// Who may derive: the hash families' fronts.
// Thread safety: as gpkv::Table promises; the backend handles concurrent
// batches.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/batch.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "tables/family_table.h"
#include "tables/write_batch.h"

namespace gpkv::tables {

// FamilyBackend: the family's Backend, derived from tables::HashBackend.
template <typename FamilyBackend>
class HashFamilyTable : public FamilyTable {
 public:
  Status Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) final {
    if (Queues(options)) {
      return Named(backend_->PutAsync(keys.bytes(), values.bytes(), CountOf(keys), options.stream));
    }
    return Named(backend_->Put(keys.bytes(), values.bytes(), CountOf(keys), options.stream));
  }
  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
             const BatchOptions& options) final {
    uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
    if (Queues(options)) {
      return Named(backend_->GetAsync(keys.bytes(), values.bytes(), found_bytes, CountOf(keys),
                                      options.stream));
    }
    return Named(
        backend_->Get(keys.bytes(), values.bytes(), found_bytes, CountOf(keys), options.stream));
  }
  Status Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) final {
    uint8_t* erased_bytes = erased.empty() ? nullptr : erased.bytes();
    if (Queues(options)) {
      return Named(backend_->EraseAsync(keys.bytes(), erased_bytes, CountOf(keys), options.stream));
    }
    return Named(backend_->Erase(keys.bytes(), erased_bytes, CountOf(keys), options.stream));
  }
  Status Synchronize(void* stream) final {
    if (stream == nullptr) return Status::OK();
    return Named(backend_->Synchronize(stream));
  }
  Status Close() override { return Named(backend_->SynchronizeAll()); }
  // A put batch of the keys whose last operation is a put, then an erase
  // batch of the others (tables::ResolveWrite): the two are disjoint, so
  // their order does not change the outcome; each operation is atomic as in
  // Put and Erase, and the probe keys' liveness is read first.
  Status Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
               const BatchOptions& options) final {
    return Named(ResolveAndWrite(
        keys, values, ops, erased, [&](const ResolvedWrite& batch, uint8_t* probe_found) {
          if (batch.probes != 0) {
            std::vector<uint8_t> probe_values(batch.probes * this->options().value_size);
            GPKV_RETURN_IF_ERROR(backend_->Get(batch.probe_keys.data(), probe_values.data(),
                                               probe_found, batch.probes, options.stream));
          }
          if (batch.puts != 0) {
            GPKV_RETURN_IF_ERROR(backend_->Put(batch.put_keys.data(), batch.put_values.data(),
                                               batch.puts, options.stream));
          }
          if (batch.erases == 0) return Status::OK();
          return backend_->Erase(batch.erase_keys.data(), nullptr, batch.erases, options.stream);
        }));
  }

 protected:
  // Errors of the backend get `where` and ": " in front of their message,
  // unless `where` is empty.
  HashFamilyTable(std::string name, const TableOptions& options,
                  std::unique_ptr<FamilyBackend> backend, std::string where = {})
      : FamilyTable(std::move(name), options),
        where_(std::move(where)),
        backend_(std::move(backend)) {}

  FamilyBackend& backend() const { return *backend_; }

  // True when the batch goes to the backend's Async twin (the engine has
  // refused async without a stream).
  static bool Queues(const BatchOptions& options) {
    return options.async && options.stream != nullptr;
  }

  // `status` with `where` in front of its message when it is an error.
  Status Named(Status status) const {
    if (where_.empty()) return status;
    return Prefixed(where_, status);
  }

 private:
  const std::string where_;
  const std::unique_ptr<FamilyBackend> backend_;
};

}  // namespace gpkv::tables
