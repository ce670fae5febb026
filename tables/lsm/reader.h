// Bounds-checked reading of an LSM table's bytes: the one place that decides
// whether a root, its active manifest, a run and the log can be trusted.
// Shared by open, verify, repair and the extent sweep, so all of them accept
// and reject exactly the same bytes. Every offset and length read from the
// pool is checked against the heap before it is used.
//
// Who may call: tables/lsm/ and tests.
// Thread safety: plain functions over a const pool; an LsmView is a value.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/log/log.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"
#include "tables/root_reader.h"

namespace gpkv::lsm {

// A validated copy of a root and its active manifest. Every range it names
// (root, log, runs) lies inside the heap, is 4 KiB aligned, and no two
// overlap.
struct LsmView : tables::RootIdentity {
  uint32_t log2_batch = 0;
  uint32_t log_batches = 1;  // M (a root's 0 reads as 1)
  uint64_t log_offset = 0;
  uint64_t log_capacity = 0;  // the whole extent (both halves)
  uint64_t root_flags = 0;
  uint64_t active_word = 0;
  Manifest manifest{};  // copy of the active manifest
  // The log: its extent, halves (of log_capacity / LogHalves(root_flags)
  // bytes) and the pool offsets of the root's commit words.
  log::Place log_place;
  // The published log records, oldest first (log::FindSegments): segment 0
  // is the manifest's half (its word's bytes when its epoch is the
  // manifest's, else empty: a flush published its manifest and had not yet
  // reset the word); segment 1, in a two-half log only, the other half's
  // records of the next epoch (a checkpoint was in flight).
  log::Segments log_segments;
  uint32_t log_halves() const { return LogHalves(root_flags); }
  const log::Segment& log_segment(uint32_t segment) const { return log_segments.segments[segment]; }

  EntryShape shape() const { return {key_size / 8, value_size}; }
  uint64_t batch_entries() const { return uint64_t{1} << log2_batch; }
  // The write buffer flushes before its logged entries reach this: M * b.
  uint64_t buffer_entries() const { return BufferEntries(log2_batch, log_batches); }
  // "table 'users' level 3 run"
  std::string RunRegion(uint32_t level) const;
};

// Reads and validates the root at root_offset (magic, checksum, sizes, log
// extent) and its active manifest (checksum, generation, levels, every run
// reference inside the heap and within its level's capacity, no overlaps,
// allocated in the extent table unless !require_allocated). Corruption names
// file, table, region and offset.
Result<LsmView> ReadLsmRoot(const pm::Pool& pool, const std::string& table_name,
                            uint64_t root_offset, bool require_allocated = true);

// How much of a run to check: the header alone (it must agree with the
// manifest), plus the data and filter checksums, plus key order, meta words
// and every key found by the filter.
enum class RunCheck { kHeader, kChecksum, kFull };

// Validates the run of `level` and returns a view of it in the pool (the
// checksums summed on `threads` threads): ReadRunData, then CheckRunFilter.
// Corruption naming the table, level and offset when it fails a check.
Result<RunView> ReadRun(const pm::Pool& pool, const LsmView& view, uint32_t level, RunCheck check,
                        RunSummary* summary = nullptr, int threads = 1);

// ReadRun without the filter's checks: the header and the run's data.
Result<RunView> ReadRunData(const pm::Pool& pool, const LsmView& view, uint32_t level,
                            RunCheck check, RunSummary* summary = nullptr, int threads = 1);

// The filter checks of ReadRun for `run` (ReadRunData's view of `level`):
// with kChecksum or kFull its checksum, with kFull also that it may hold
// every key of the run (a key it misses is corruption: a get would not find
// it). Corruption naming the table, level and the filter's offset.
Status CheckRunFilter(const pm::Pool& pool, const LsmView& view, uint32_t level, const RunView& run,
                      RunCheck check, int threads = 1);

// The run header of `level`, checked against the manifest (what ReadRun's
// RunCheck::kHeader checks), copied to *header. For backends that check the
// data checksum themselves (the GPU's, on its copy of the run).
Status ReadRunHeader(const pm::Pool& pool, const LsmView& view, uint32_t level, RunHeader* header);

// Corruption of the run of `level`: its data checksum is not `computed`.
Status RunChecksumMismatch(const pm::Pool& pool, const LsmView& view, uint32_t level,
                           uint64_t stored, uint64_t computed);

// Visits every published log record of the table in order (log::ReadRecords
// over view.log_segments, the first sequence number after the manifest's
// applied_seq; DecodeLogRecord reads either record form). Corruption at the
// first bad record; *cut (if not null) then names where the intact records
// end.
Status ReadLog(const pm::Pool& pool, const LsmView& view, const log::RecordVisitor& visit,
               log::Cut* cut = nullptr, int threads = 1);

// ReadLog with each record decoded (DecodeLogRecord) before it is visited,
// as a run: the visits stop at the first record that does not decode, which
// *bad_record then describes (its Corruption, its offset, and the cut where
// the intact records end). Returns ReadLog's status.
using DecodedLogVisitor =
    std::function<void(uint32_t segment, const log::RecordHeader& header, RunData&& record)>;
struct BadLogRecord {
  Status status;  // OK while every record decoded
  uint64_t offset = 0;
  log::Cut cut;
};
Status ReadDecodedLog(const pm::Pool& pool, const LsmView& view, const DecodedLogVisitor& visit,
                      BadLogRecord* bad_record, log::Cut* cut = nullptr, int threads = 1);

// Corruption naming the record's offset unless the keys of the columnar
// record that ReadLog visited ascend (its arrays can then be used as a run's
// as they are: the GPU backend uploads them).
Status CheckColumnarRecordKeys(const pm::Pool& pool, const LsmView& view,
                               const log::RecordHeader& header, uint64_t offset,
                               const uint8_t* entries);

// The entries of a record that ReadLog visited, row or columnar, as a run in
// *out; Corruption naming the record's offset unless its keys ascend and
// every entry has the record's sequence number.
Status DecodeLogRecord(const pm::Pool& pool, const LsmView& view, const log::RecordHeader& header,
                       uint64_t offset, const uint8_t* entries, RunData* out);

// The open's notes for a recovery report: `records` log records replayed
// into the write buffer; the checkpoint a crash left in flight completed.
recovery::Finding ReplayedLogFinding(const pm::Pool& pool, const LsmView& view, uint64_t records);
recovery::Finding CompletedCheckpointFinding(const pm::Pool& pool, const LsmView& view);

// "0x3a000": the families' one hex formatting (tables/root_reader.h).
using tables::Hex;

}  // namespace gpkv::lsm
