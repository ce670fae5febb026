// The modes of the GPU benchmark (see gpu_modes.h).
#include "bench/gpu/gpu_modes.h"

#include <cstdint>
#include <string>

namespace gpkv::bench::gpu {
namespace {

// The number after `prefix` in `option` ("cache40" -> 40), or -1 when the
// option is not `prefix` followed by 1 to 3 digits.
int NumberAfter(const std::string& option, const std::string& prefix) {
  if (option.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string digits = option.substr(prefix.size());
  if (digits.empty() || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  return std::stoi(digits);
}

}  // namespace

std::string BaseMode(const std::string& mode) { return mode.substr(0, mode.find('+')); }

bool IsTableMode(const std::string& mode) { return mode == "logged" || mode == "ordered"; }

TableOptions ModeTableOptions(const std::string& mode, uint64_t keys) {
  TableOptions options;
  options.expected_keys = keys;
  if (mode == "logged") {
    // A log of 32 batches of 2^20 (512 MiB): a checkpoint every 32 full
    // batches; a LOAD of 2^24 keys fits the log.
    options.hash_log.batch_entries = uint64_t{1} << 20;
    options.hash_log.log_batches = 32;
  } else if (mode == "ordered") {
    options.kind = TableKind::kOrdered;
  }
  return options;
}

Result<GpuMode> ParseGpuMode(const std::string& mode) {
  const std::string base = BaseMode(mode);
  GpuMode parsed;
  if (base == "direct") {
    parsed.options.index_mode = HashGpuIndexMode::kDirect;
  } else if (base == "mirror") {
    parsed.options.index_mode = HashGpuIndexMode::kMirror;
  } else if (base == "staged") {
    parsed.options.index_mode = HashGpuIndexMode::kStaged;
  } else {
    return Status::InvalidArgument("mode '" + mode + "': not direct, mirror or staged");
  }
  for (size_t at = mode.find('+'); at != std::string::npos;) {
    const size_t next = mode.find('+', at + 1);
    const std::string option =
        mode.substr(at + 1, next == std::string::npos ? next : next - at - 1);
    if (option == "warpputs") {
      parsed.options.warp_puts = true;
    } else if (option == "tilegets") {
      parsed.options.tile_index_gets = true;
    } else if (option == "sortall") {
      parsed.options.sorted_get_min_ops = 0;
    } else if (option == "nocache") {
      parsed.cache_fraction = 0;
    } else if (const int percent = NumberAfter(option, "cache"); percent >= 0 && percent <= 100) {
      parsed.cache_fraction = percent / 100.0;
    } else if (const int log2 = NumberAfter(option, "reload"); log2 >= 0 && log2 <= 40) {
      parsed.options.bkt_cache_reload_ops = uint64_t{1} << log2;
    } else {
      return Status::InvalidArgument(
          "mode '" + mode + "': unknown option '" + option +
          "' (options: warpputs, tilegets, sortall, nocache, cacheP with P <= 100, reloadN "
          "with N <= 40)");
    }
    at = next;
  }
  return parsed;
}

Status CheckMode(const std::string& mode) {
  if (mode == "cpu" || mode == "naive" || mode == "host" || mode == "host-tables" ||
      IsTableMode(mode)) {
    return Status::OK();
  }
  const std::string base = BaseMode(mode);
  if (base == "cpu" || base == "naive" || IsTableMode(base)) {
    return Status::InvalidArgument("mode '" + mode + "': " + base + " takes no options");
  }
  if (base != "direct" && base != "mirror" && base != "staged") {
    return Status::InvalidArgument("mode '" + mode +
                                   "' is not direct, mirror, staged (each with options after "
                                   "'+'), cpu, naive, logged, ordered, host or host-tables");
  }
  auto parsed = ParseGpuMode(mode);
  return parsed.ok() ? Status::OK() : parsed.status();
}

}  // namespace gpkv::bench::gpu
