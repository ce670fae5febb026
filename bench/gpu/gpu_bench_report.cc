// The GPU suite's tables and JSON lines (see gpu_bench_report.h).
#include "bench/gpu/gpu_bench_report.h"

#include <sstream>
#include <string>
#include <vector>

namespace gpkv::bench::gpu {
namespace {

const Row* FindRow(const std::vector<Row>& rows, const std::string& mode,
                   const std::string& workload, uint64_t batch) {
  for (const Row& row : rows) {
    if (row.mode == mode && row.workload == workload && row.batch == batch) return &row;
  }
  return nullptr;
}

}  // namespace

void PrintLinkCalibration(const std::vector<LinkResult>& link, uint64_t index_bytes,
                          std::FILE* out) {
  if (link.empty()) return;
  std::fprintf(out, "\nlink calibration (random 8-byte accesses, millions per second):\n");
  std::fprintf(out, "  %-9s %12s %12s %12s %12s %12s\n", "region", "host read", "host CAS",
               "host store", "HBM read", "HBM CAS");
  for (const LinkResult& r : link) {
    std::fprintf(out, "  %6.0f MiB %12.1f %12.1f %12.1f %12.1f %12.1f%s\n",
                 r.region_bytes / 1048576.0, r.host_reads_per_s / 1e6, r.host_cas_per_s / 1e6,
                 r.host_stores_per_s / 1e6, r.hbm_reads_per_s / 1e6, r.hbm_cas_per_s / 1e6,
                 r.region_bytes == index_bytes ? "  (the table's index)" : "");
  }
}

void PrintNaiveRatios(const std::vector<Row>& rows, std::FILE* out) {
  bool header = false;
  for (const Row& naive : rows) {
    if (naive.mode != "naive" || naive.workload.rfind("A ", 0) != 0) continue;
    for (const Row& row : rows) {
      if (row.mode == "naive" || row.workload != naive.workload || row.batch != naive.batch) {
        continue;
      }
      if (!header) {
        std::fprintf(out, "\nYCSB A vs the naive baseline:\n");
        header = true;
      }
      double ratio = row.mops() / naive.mops();
      std::fprintf(out, "  %-14s %-9s batch %8llu: %10.2f vs %10.2f Mops/s = %6.2fx\n",
                   row.mode.c_str(), row.workload.substr(2, row.workload.find(' ', 2) - 2).c_str(),
                   static_cast<unsigned long long>(row.batch), row.mops(), naive.mops(), ratio);
    }
  }
}

void PrintTableModeRatios(const std::vector<Row>& rows, std::FILE* out) {
  bool header = false;
  for (const Row& row : rows) {
    if (row.mode != "logged" && row.mode != "ordered") continue;
    for (const Row& peer : rows) {
      if ((peer.mode != "mirror" && peer.mode != "direct") || peer.workload != row.workload ||
          peer.batch != row.batch) {
        continue;
      }
      if (!header) {
        std::fprintf(out, "\nlogged and ordered tables vs the in-place modes:\n");
        header = true;
      }
      std::fprintf(out, "  %-8s vs %-7s %-24s batch %8llu: %10.2f vs %10.2f Mops/s = %6.2fx\n",
                   row.mode.c_str(), peer.mode.c_str(), row.workload.c_str(),
                   static_cast<unsigned long long>(row.batch), row.mops(), peer.mops(),
                   row.mops() / peer.mops());
    }
  }
}

void PrintTransactionModel(std::FILE* out) {
  std::fprintf(
      out,
      "\npool transactions per operation (model, default 2L-2H-8S, 8-byte keys and values):\n"
      "  direct get:    the candidate buckets in winner order up to the one holding the key\n"
      "                 (1-4 bucket reads, ~1.5 on average) + key + value + slot re-read\n"
      "  direct insert: 4 probe reads + CAS + key + value + publish = 8 (+2 system fences)\n"
      "  direct update: 4 probe reads + key + value store = 6\n"
      "  direct + BktCache: the same, less the bucket reads of cached buckets (HBM); the\n"
      "                 cache/get and pool/get columns below count them (measured)\n"
      "  mirror get:    0 (HBM only)\n"
      "  mirror insert: key + value + publish = 3 stores (probe and CAS in HBM)\n"
      "  mirror update: 1 store\n"
      "  staged:        as mirror, but each store is a 16-byte log entry copied to the host\n"
      "                 after the launch, which stores it in the pool (no link transaction\n"
      "                 to the pool mapping)\n"
      "  naive get:     1 + probe length reads of 16 B (linear probing, load factor <= 2/3)\n"
      "  naive insert:  probe reads + CAS + value store; naive update: probe reads + 1 store\n");
}

void PrintRows(const std::vector<Row>& rows, std::FILE* out) {
  std::fprintf(out,
               "\n(cache/get, pool/get: bucket reads per get served by the BktCache and read "
               "over the link, measured)\n");
  std::fprintf(out, "\n%-14s %-27s %8s %10s %9s %10s %10s %10s\n", "mode", "workload", "batch",
               "ops", "seconds", "Mops/s", "cache/get", "pool/get");
  for (const Row& row : rows) {
    std::fprintf(out, "%-14s %-27s %8llu %10llu %9.3f %10.2f", row.mode.c_str(),
                 row.workload.c_str(), static_cast<unsigned long long>(row.batch),
                 static_cast<unsigned long long>(row.ops), row.seconds, row.mops());
    if (row.cache_reads_per_get >= 0) {
      std::fprintf(out, " %10.3f %10.3f", row.cache_reads_per_get, row.pool_reads_per_get);
    }
    std::fprintf(out, "\n");
  }
}

void PrintWritePhases(const std::vector<Row>& rows, std::FILE* out) {
  bool header = false;
  for (const Row& row : rows) {
    const WritePhases& phases = row.write_phases;
    if (phases.batches == 0) continue;
    if (!header) {
      std::fprintf(out,
                   "\nlogged write batches, microseconds per batch (a device batch's index "
                   "apply runs beside its record's copy: record is the copy's rest):\n");
      std::fprintf(out, "%-14s %-27s %8s %8s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "mode",
                   "workload", "batch", "batches", "total", "checkpt", "ckpt-scan", "ckpt-wait",
                   "ckpt-pub", "record", "publish", "sync", "index");
      header = true;
    }
    std::fprintf(out,
                 "%-14s %-27s %8llu %8.0f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
                 row.mode.c_str(), row.workload.c_str(), static_cast<unsigned long long>(row.batch),
                 phases.batches, phases.total_us, phases.checkpoint_us, phases.scan_us,
                 phases.wait_us, phases.ckpt_publish_us, phases.record_us, phases.publish_us,
                 phases.sync_us, phases.index_us);
  }
}

void PrintCpuRatios(const std::vector<Row>& rows, const std::vector<LinkResult>& link,
                    const std::vector<LoadFactorRow>& load_factors, uint64_t index_bytes,
                    std::FILE* out) {
  std::fprintf(out, "\nratios against the CPU backend and the link of the same run:\n");
  const uint64_t big = uint64_t{1} << 20, small = 4096;
  for (const char* mode : {"mirror", "staged", "direct", "direct+nocache"}) {
    for (uint64_t batch : {big, small}) {
      const Row* gpu = FindRow(rows, mode, "C get zipfian", batch);
      const Row* cpu = FindRow(rows, "cpu", "C get zipfian", batch);
      if (gpu == nullptr || cpu == nullptr) continue;
      const double ratio = gpu->mops() / cpu->mops();
      std::fprintf(out, "  %-14s YCSB C zipfian, batch %7llu: %8.1f Mops/s = %6.2fx cpu (%.1f)\n",
                   mode, static_cast<unsigned long long>(batch), gpu->mops(), ratio, cpu->mops());
    }
  }
  // LOAD with the mirror against the pool's random-store rate at the index's
  // size: each insert sends the pool 3 stores (key, value, slot word).
  const Row* load = FindRow(rows, "mirror", "LOAD (insert)", kLoadBatch);
  const LinkResult* at = nullptr;
  for (const LinkResult& r : link) {
    if (r.region_bytes == index_bytes) at = &r;
  }
  if (load != nullptr && at != nullptr) {
    const double stores = at->host_stores_per_s / 1e6;
    std::fprintf(
        out,
        "  mirror LOAD: %.1f M inserts/s = %.1f M pool stores/s; random 8-byte stores to a "
        "%.0f MiB registered region: %.1f M/s; inserts/s %.0f%% of it, stores/s %.0f%% of it\n",
        load->mops(), 3 * load->mops(), index_bytes / 1048576.0, stores,
        100 * load->mops() / stores, 300 * load->mops() / stores);
  }
  double cpu_lf = -1;
  for (const LoadFactorRow& row : load_factors) {
    if (row.mode == "cpu" && row.resized) cpu_lf = row.load_factor;
  }
  for (const LoadFactorRow& row : load_factors) {
    if (!row.resized) {
      std::fprintf(out, "  load factor %-6s: no resize within 4x the slots\n", row.mode.c_str());
      continue;
    }
    std::fprintf(out,
                 "  load factor before the first resize, %-6s: %.4f (%llu slots, last batch %llu)",
                 row.mode.c_str(), row.load_factor, static_cast<unsigned long long>(row.slots),
                 static_cast<unsigned long long>(row.batch));
    if (row.mode != "cpu" && cpu_lf > 0) {
      // Known to within the batch that resized (batch / slots).
      std::fprintf(out, "  (cpu %.4f, difference %+.4f, batch / slots %.4f)", cpu_lf,
                   row.load_factor - cpu_lf, static_cast<double>(row.batch) / row.slots);
    }
    std::fprintf(out, "\n");
  }
}

std::string JsonLines(const std::string& device, uint64_t keys, const std::vector<LinkResult>& link,
                      uint64_t index_bytes, const std::vector<LoadFactorRow>& load_factors,
                      const std::vector<Row>& rows, const std::vector<OpenRow>& opens) {
  std::ostringstream json;
  for (const LinkResult& r : link) {
    json << "{\"kind\":\"link\",\"device\":\"" << device << "\",\"region_bytes\":" << r.region_bytes
         << ",\"host_reads_per_s\":" << r.host_reads_per_s
         << ",\"host_cas_per_s\":" << r.host_cas_per_s
         << ",\"host_stores_per_s\":" << r.host_stores_per_s
         << ",\"hbm_reads_per_s\":" << r.hbm_reads_per_s << ",\"hbm_cas_per_s\":" << r.hbm_cas_per_s
         << ",\"index\":" << (r.region_bytes == index_bytes ? "true" : "false") << "}\n";
  }
  for (const LoadFactorRow& row : load_factors) {
    json << "{\"kind\":\"load_factor\",\"device\":\"" << device << "\",\"mode\":\"" << row.mode
         << "\",\"resized\":" << (row.resized ? "true" : "false")
         << ",\"load_factor\":" << row.load_factor << ",\"slots\":" << row.slots
         << ",\"batch\":" << row.batch << "}\n";
  }
  for (const Row& row : rows) {
    json << "{\"kind\":\"table\",\"system\":\"gpkv-gpu\",\"device\":\"" << device
         << "\",\"mode\":\"" << row.mode << "\",\"workload\":\"" << row.workload
         << "\",\"keys\":" << keys << ",\"batch\":" << row.batch << ",\"ops\":" << row.ops
         << ",\"seconds\":" << row.seconds << ",\"mops\":" << row.mops();
    if (row.cache_reads_per_get >= 0) {
      json << ",\"cache_reads_per_get\":" << row.cache_reads_per_get
           << ",\"pool_reads_per_get\":" << row.pool_reads_per_get;
    }
    const WritePhases& phases = row.write_phases;
    if (phases.batches != 0) {
      json << ",\"write_batches\":" << phases.batches
           << ",\"write_us\":{\"total\":" << phases.total_us
           << ",\"checkpoint\":" << phases.checkpoint_us
           << ",\"checkpoint_scan\":" << phases.scan_us << ",\"checkpoint_wait\":" << phases.wait_us
           << ",\"checkpoint_publish\":" << phases.ckpt_publish_us
           << ",\"record\":" << phases.record_us << ",\"publish\":" << phases.publish_us
           << ",\"sync\":" << phases.sync_us << ",\"index\":" << phases.index_us << "}";
    }
    json << "}\n";
  }
  for (const OpenRow& open : opens) {
    json << "{\"kind\":\"open\",\"system\":\"gpkv-gpu\",\"device\":\"" << device << "\",\"mode\":\""
         << open.mode << "\",\"keys\":" << keys << ",\"seconds\":" << open.seconds;
    if (open.log_fill >= 0) json << ",\"log_fill\":" << open.log_fill;
    if (open.check_seconds >= 0) {
      json << ",\"steps_seconds\":{\"check\":" << open.check_seconds
           << ",\"index\":" << open.index_seconds << ",\"image\":" << open.image_seconds
           << ",\"replay\":" << open.replay_seconds << "}";
    }
    json << "}\n";
  }
  return json.str();
}

}  // namespace gpkv::bench::gpu
