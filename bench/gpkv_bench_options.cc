#include "bench/gpkv_bench_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

namespace gpkv::bench {
namespace {

// The CPU suites, which drive tables through the engine.
const std::vector<std::string> kCpuSuites = {"foundation", "ycsb", "sweep", "ordered"};

}  // namespace

std::string HelpFooter() {
  std::string text =
      "Suites (--suite):\n"
      "  foundation  load / get / update / erase of gpkv beside libcuckoo, and the load factor\n"
      "              before the first resize (the default)\n"
      "  ycsb        YCSB LOAD, A, B, C, F (zipfian, uniform), then D (latest), every system\n"
      "  sweep       one workload over batch sizes 2^--sweep-min .. 2^--sweep-max\n"
      "  ordered     an ordered (LSM) table beside RocksDB (Seek + Next, sync = true) and LMDB\n"
      "              (cursor, synced commits): insert rate per batch 2^--insert-min ..\n"
      "              2^--insert-max, get / count / range (~8 keys) per --table-sizes, YCSB E\n"
      "              (95% ranges, 5% inserts), and range32 (~32 keys) when --workloads names\n"
      "              it; systems gpkv, gpkv-btree-cpu, gpkv-gpu, gpkv-gpu-dev, rocksdb, lmdb\n"
      "  gpu         the CUDA backend's micro-benchmarks: link calibration, then per --modes\n"
      "              entry LOAD and YCSB C / update / A points per --batches size, load factors\n"
      "              and the pool-transaction model";
  if (!bench::gpu::GpuBenchBuiltIn()) text += " (not in this build: no CUDA backend)";
  text +=
      "\n  slab        the volatile slab hash on the GPU: build, search hit / miss, delete and\n"
      "              mixed batches per --keys-log2 count and --utilisation target, beside the\n"
      "              persistent hash table (mirror mode) on the same keys; growth cost and\n"
      "              SlabAlloc's rate";
  if (!bench::gpu::SlabBenchBuiltIn()) text += " (not in this build: no CUDA backend)";
  text +=
      "\n  btree       the volatile ordered table (GPU B-tree): bulk build, insert, get, range\n"
      "              (~8, ~32 keys), erase per --keys-log2 count (default 20,22,24) and --batch\n"
      "              size, and update, insert, erase, get and ranges with a snapshot held, each\n"
      "              with its cost beside the same operation without one, beside the\n"
      "              persistent ordered table (LSM) and the slab hash on the same keys";
  if (!bench::gpu::BtreeBenchBuiltIn()) text += " (not in this build: no CUDA backend)";
  text += "\n\nSystems (--systems; suites foundation, ycsb, sweep):\n";
  for (const SystemInfo& system : BuiltInSystems()) {
    text += "  " + system.name + std::string(16 - std::min<size_t>(15, system.name.size()), ' ') +
            system.durability + "\n";
  }
  if (!RocksdbBuiltIn()) {
    text += "  rocksdb, rocksdb-nosync: not in this build (built without RocksDB)\n";
  }
  text +=
      "  (gpkv runs on --backend cpu | auto | cuda; the engine picks the GPU mode)\n\n"
      "GPU modes (--modes; suite gpu):\n"
      "  direct, mirror, staged  the CUDA backend in that index mode; options after '+':\n"
      "                          nocache, cacheP (P% of the buckets cached), reloadN (every\n"
      "                          2^N operations), sortall, and mirror / staged kernels\n"
      "                          warpputs, tilegets (e.g. direct+nocache, mirror+tilegets)\n"
      "  cpu                     the CPU backend on all hardware threads\n"
      "  naive                   the naive GPU baseline (linear probing over a registered file)\n"
      "  logged                  a logged hash table on the CUDA backend (each batch a log\n"
      "                          record, the index in GPU memory; batches of 2^20, a log of 32)\n"
      "  ordered                 an ordered (LSM) table on the CUDA backend\n"
      "  host                    host batches (pageable, registered, device memory) through\n"
      "                          the engine and every mode above\n"
      "  host-tables             host batches through the logged and ordered tables alone\n";
  return text;
}

void AddOptions(CLI::App* bench, BenchArgs* args) {
  BenchConfig* config = &args->config;
  // Marks an option as taken by `suites` only.
  auto only = [args](std::vector<std::string> suites) {
    return [args, suites](CLI::Option* option) {
      args->suite_options.push_back({option, suites});
      return option;
    };
  };
  auto table = only(kCpuSuites);
  auto table_or_slab = only({"foundation", "ycsb", "sweep", "ordered", "slab", "btree"});
  auto gpu = only({"gpu"});
  auto slab = only({"slab"});
  auto slab_or_btree = only({"slab", "btree"});
  auto btree = only({"btree"});
  auto ordered = only({"ordered"});
  bench
      ->add_option("--suite", config->suite,
                   "foundation | ycsb | sweep | ordered | gpu | slab | btree (below)")
      ->check(CLI::IsMember({"foundation", "ycsb", "sweep", "ordered", "gpu", "slab", "btree"}))
      ->capture_default_str();
  args->keys = bench
                   ->add_option("--keys", config->keys,
                                "records loaded (16M = 16777216); slab: run this key count "
                                "(instead of the --keys-log2 default, or beside a --keys-log2 "
                                "list)")
                   ->transform(CLI::AsSizeValue(false))
                   ->capture_default_str();
  table(bench->add_option("--pool", config->pool_path, "pool file (removed before and after)"))
      ->capture_default_str();
  table(bench->add_option("--pool-size", config->pool_size, "pool bytes; 0 = from keys and sizes"))
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  table(bench->add_option(
            "--ops", config->ops,
            "operations per workload; 0 = keys (ycsb: 4 x keys; ordered: 2^20 queries)"))
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  args->batches = {config->batch};
  args->batch = table_or_slab(bench->add_option("--batch", args->batches,
                                                "operations per batch (slab, btree: default 1M = "
                                                "2^20); btree: a list runs each"))
                    ->delimiter(',')
                    ->transform(CLI::AsSizeValue(false))
                    ->capture_default_str();
  table(bench->add_option("--threads", config->threads, "threads of every system"))
      ->capture_default_str();
  table(
      bench->add_option("--key-size", config->key_sizes, "key bytes: 8, 16, 32 (a list runs each)"))
      ->delimiter(',')
      ->capture_default_str();
  table(bench->add_option("--value-size", config->value_sizes,
                          "value bytes: 1..128 (a list runs each)"))
      ->delimiter(',')
      ->capture_default_str();
  table_or_slab(bench->add_option("--seed", config->seed, "seed of keys, values and operations"))
      ->capture_default_str();
  args->json = bench
                   ->add_option("--json", args->json_value,
                                "print JSON instead of the table; with FILE (--json=FILE), write "
                                "the JSON to FILE and the table to stdout (suites gpu and slab: "
                                "one JSON object per line)")
                   ->expected(0, 1)
                   ->type_name("[FILE]");
  bench->add_option("--json-file", args->json_file, "the same as --json=FILE");
  table(bench->add_option("--systems", config->systems,
                          "systems to run (default: foundation gpkv,libcuckoo; others all built "
                          "in)"))
      ->delimiter(',');
  table(bench->add_option("--workloads", config->workloads,
                          "ycsb / sweep / ordered workloads (default ycsb LOAD,A,B,C,F,D; sweep C; "
                          "ordered insert,get,count,range,E, range32 too when named)"))
      ->delimiter(',');
  table(bench->add_option("--distributions", config->distributions,
                          "zipfian,uniform (default: ycsb both, sweep zipfian)"))
      ->delimiter(',');
  table(bench->add_option("--sweep-min", config->sweep_min_log2, "sweep: smallest batch, log2"))
      ->capture_default_str();
  table(bench->add_option("--sweep-max", config->sweep_max_log2, "sweep: largest batch, log2"))
      ->capture_default_str();
  table(bench->add_option("--lf-keys", config->lf_keys,
                          "foundation: expected_keys of the load-factor probe table; 0 = skip"))
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  table(bench->add_option("--max-seconds", config->max_seconds,
                          "stop a measurement after the batch that passes this (default: sweep "
                          "5, ordered 2, others none)"));
  table(bench->add_option("--backend", args->backend, "gpkv backend: cpu | auto | cuda"))
      ->check(CLI::IsMember({"cpu", "auto", "cuda"}))
      ->capture_default_str();
  table(bench->add_option("--rocksdb-dir", config->rocksdb_dir,
                          "RocksDB directory (removed before and after)"))
      ->capture_default_str();
  table(bench->add_option("--hash-log-batches", config->hash_log_batches,
                          "gpkv-logged: M of its table (a log half holds M batches of 4096)"))
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  bench::gpu::GpuBenchConfig* gpu_config = &args->gpu;
  ordered(bench
              ->add_option("--insert-min", config->ordered_insert_min_log2,
                           "ordered: smallest insert batch, log2")
              ->capture_default_str());
  ordered(bench
              ->add_option("--insert-max", config->ordered_insert_max_log2,
                           "ordered: largest insert batch, log2")
              ->capture_default_str());
  ordered(bench
              ->add_option("--insert-keys", config->ordered_insert_keys,
                           "ordered: keys each insert measurement writes (at least one batch)")
              ->capture_default_str());
  ordered(bench
              ->add_option("--table-sizes", config->ordered_table_log2,
                           "ordered: query table sizes, log2 (a list; E runs on the largest)")
              ->delimiter(',')
              ->capture_default_str());
  ordered(bench
              ->add_option("--lsm-batch", config->ordered_batch_entries,
                           "ordered: b of the gpkv table (level 0 entries, a power of two)")
              ->capture_default_str());
  ordered(bench
              ->add_option("--lsm-log-batches", config->ordered_log_batches,
                           "ordered: M of the gpkv table (its log holds M batches of b)")
              ->check(CLI::Range(1, 1024))
              ->capture_default_str());
  ordered(bench
              ->add_option("--lsm-checkpoint-chunk-mb", config->ordered_gpu.checkpoint_chunk_mb,
                           "ordered, gpkv on the GPU: MiB per slice of a checkpoint's copy to the "
                           "pool (0: one copy)")
              ->capture_default_str());
  ordered(bench
              ->add_option("--lsm-pooled-runs", config->ordered_gpu.pooled_runs,
                           "ordered, gpkv on the GPU: runs from the stream-ordered memory pool "
                           "(false: cudaMalloc)")
              ->capture_default_str());
  ordered(bench
              ->add_option("--lsm-wait-for-registration", config->ordered_gpu.wait_for_registration,
                           "ordered, gpkv on the GPU: a run written before the pool's "
                           "registration waits for it (false: pageable copy)")
              ->capture_default_str());
  ordered(bench
              ->add_option("--lsm-reserve-buffers", config->ordered_gpu.reserve_buffers,
                           "ordered, gpkv on the GPU: write buffers of device memory reserved at "
                           "open (0: none)")
              ->capture_default_str());
  ordered(bench
              ->add_option("--lsm-read-filters", config->ordered_gpu.read_filters,
                           "ordered, gpkv on the GPU: gets test the levels' run filters before "
                           "searching a run (false: every run searched)")
              ->capture_default_str());
  gpu(bench->add_option("--modes", gpu_config->modes, "gpu: modes to run, in order (below)"))
      ->delimiter(',')
      ->capture_default_str();
  gpu(bench->add_option(
          "--batches", gpu_config->batch_log2,
          "gpu: batch sizes, log2 (1.." + std::to_string(bench::gpu::kMaxBatchLog2) + ")"))
      ->delimiter(',')
      ->capture_default_str();
  gpu(bench->add_option("--dir", gpu_config->dir,
                        "gpu: directory of the pools and registered files (tmpfs registers)"))
      ->capture_default_str();
  gpu(bench->add_option("--staged-dir", gpu_config->staged_dir,
                        "gpu: staged mode's pool directory (one the GPU may not map); "
                        "default --dir"));
  gpu(bench->add_flag("--no-calibration", args->no_calibration, "gpu: skip the link calibration"));
  bench::gpu::SlabBenchConfig* slab_config = &args->slab;
  args->slab_keys_log2 = {24, 26};
  args->keys_log2 =
      slab_or_btree(bench->add_option("--keys-log2", args->slab_keys_log2,
                                      "slab, btree: key counts, log2 (" +
                                          std::to_string(bench::gpu::kSlabMinKeysLog2) + ".." +
                                          std::to_string(bench::gpu::kSlabMaxKeysLog2) + ")"))
          ->delimiter(',')
          ->capture_default_str();
  slab(bench->add_option("--utilisation", slab_config->utilisation_percent,
                         "slab: memory utilisation targets, percent (the measured value is "
                         "printed beside each)"))
      ->delimiter(',')
      ->capture_default_str();
  slab_or_btree(
      bench->add_option("--repeats", slab_config->repeats,
                        "slab, btree: runs of each point (fresh tables); the median is reported"))
      ->capture_default_str();
  slab(bench->add_option("--allocations", slab_config->allocations,
                         "slab: SlabAlloc allocations per run (16M = 2^24)"))
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  slab_or_btree(
      bench->add_option("--pool-dir", slab_config->pool_dir,
                        "slab, btree: directory of the persistent peer's pool (tmpfs registers)"))
      ->capture_default_str();
  btree(bench->add_flag("--device-batches", args->btree_device_batches,
                        "btree: batch arrays (keys, values, bounds, answers) in GPU memory, "
                        "copied there before the timing"));
  bench->add_flag("--list-systems", args->list_systems,
                  "list the systems built into this program and exit");
}

std::string OptionsOutsideSuite(const BenchArgs& args) {
  const std::string& suite = args.config.suite;
  for (const SuiteOption& limited : args.suite_options) {
    if (limited.option->count() == 0) continue;
    const std::vector<std::string>& suites = limited.suites;
    if (std::find(suites.begin(), suites.end(), suite) != suites.end()) continue;
    return suites.size() == 1
               ? limited.option->get_name() + " applies to --suite " + suites[0] + " only"
               : limited.option->get_name() + " does not apply to --suite " + suite;
  }
  return "";
}

Status ReadBatchOption(BenchArgs* args) {
  if (args->batch->count() == 0) return Status::OK();
  if (args->batches.size() != 1 && args->config.suite != "btree") {
    return Status::InvalidArgument("--batch takes one size here; a list is for --suite btree");
  }
  if (!args->batches.empty()) args->config.batch = args->batches.front();
  return Status::OK();
}

Status SlabKeyCounts(const BenchArgs& args, std::vector<uint64_t>* counts) {
  counts->clear();
  const bool explicit_keys = args.keys->count() > 0;
  if (args.keys_log2->count() > 0 || !explicit_keys) {
    for (int log2 : args.slab_keys_log2) {
      if (log2 < bench::gpu::kSlabMinKeysLog2 || log2 > bench::gpu::kSlabMaxKeysLog2) {
        return Status::InvalidArgument("--keys-log2 " + std::to_string(log2) + ": from " +
                                       std::to_string(bench::gpu::kSlabMinKeysLog2) + " to " +
                                       std::to_string(bench::gpu::kSlabMaxKeysLog2));
      }
      counts->push_back(uint64_t{1} << log2);
    }
  }
  if (explicit_keys &&
      std::find(counts->begin(), counts->end(), args.config.keys) == counts->end()) {
    counts->push_back(args.config.keys);
  }
  return Status::OK();
}

}  // namespace gpkv::bench
