// Printing of gpkv-bench results (see gpkv_bench_report.h).
#include "bench/gpkv_bench_report.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

namespace gpkv::bench {

std::string FormatFixed(double value, int precision) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", precision, value);
  return text;
}

namespace {

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t");
  size_t end = s.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

std::string GiB(uint64_t bytes) {
  return FormatFixed(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), 1) + " GiB";
}

// Mops/s with three significant digits or more.
std::string FormatMops(double mops) {
  if (mops >= 100.0) return FormatFixed(mops, 1);
  if (mops >= 1.0) return FormatFixed(mops, 2);
  return FormatFixed(mops, 3);
}

std::string FormatMicros(double us) {
  return us >= 100.0 ? FormatFixed(us, 0) : FormatFixed(us, 1);
}

// Columns padded to their widest cell; the first `left` columns left-aligned.
void PrintColumns(const std::vector<std::vector<std::string>>& rows, size_t left, std::FILE* out) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string pad(width[c] - row[c].size(), ' ');
      line += c < left ? row[c] + pad : pad + row[c];
      if (c + 1 < row.size()) line += "  ";
    }
    line.erase(line.find_last_not_of(' ') + 1);
    std::fprintf(out, "%s\n", line.c_str());
  }
}

bool SameCase(const Measurement& a, const Measurement& b) {
  return a.suite == b.suite && a.workload == b.workload && a.distribution == b.distribution &&
         a.batch_size == b.batch_size && a.key_size == b.key_size && a.value_size == b.value_size;
}

}  // namespace

MachineInfo ReadMachineInfo() {
  MachineInfo info;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id = "0";
  while (std::getline(cpuinfo, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = Trim(line.substr(0, colon));
    std::string value = Trim(line.substr(colon + 1));
    if (key == "model name" && info.cpu_model.empty()) info.cpu_model = value;
    if (key == "physical id") physical_id = value;
    if (key == "core id") cores.insert({physical_id, value});
  }
  info.hardware_threads = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  info.cores = cores.empty() ? info.hardware_threads : static_cast<int>(cores.size());
  cpu_set_t mask;
  CPU_ZERO(&mask);
  info.usable_threads =
      sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : info.hardware_threads;
  std::ifstream meminfo("/proc/meminfo");
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemTotal:", 0) == 0) {
      info.memory_bytes = std::stoull(line.substr(9)) * 1024;
      break;
    }
  }
  std::ifstream loadavg("/proc/loadavg");
  std::string one, five, fifteen;
  if (loadavg >> one >> five >> fifteen) info.load_average = one + " " + five + " " + fifteen;
  struct utsname name;
  if (uname(&name) == 0) {
    info.kernel = std::string(name.sysname) + " " + name.release + " " + name.machine;
    info.hostname = name.nodename;
  }
  return info;
}

CpuSnapshot TakeCpuSnapshot() {
  CpuSnapshot snapshot;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) {
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    snapshot.machine_busy_seconds =
        static_cast<double>(user + nice + system + irq + softirq + steal) / ticks;
  }
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    snapshot.self_seconds =
        static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  }
  return snapshot;
}

double OtherCores(const CpuSnapshot& start, const CpuSnapshot& end, double wall_seconds) {
  if (wall_seconds <= 0.0) return 0.0;
  double other = (end.machine_busy_seconds - start.machine_busy_seconds) -
                 (end.self_seconds - start.self_seconds);
  return other > 0.0 ? other / wall_seconds : 0.0;
}

std::string CommandLine() {
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  std::string out;
  size_t begin = 0;
  while (begin < all.size()) {
    size_t end = all.find('\0', begin);
    if (end == std::string::npos) end = all.size();
    std::string arg = all.substr(begin, end - begin);
    bool plain = !arg.empty() && arg.find_first_not_of(
                                     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789-_=./,:+%@") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += arg;
    } else {
      out += '\'';
      for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
    begin = end + 1;
  }
  return out;
}

std::string UtcDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string BuildInfo() {
  std::string info;
#if defined(__clang__)
  info = "clang " __clang_version__;
#elif defined(__GNUC__)
  info = "g++ " __VERSION__;
#else
  info = "unknown compiler";
#endif
#ifdef NDEBUG
  info += ", NDEBUG";
#else
  info += ", assertions on (not NDEBUG)";
#endif
#ifdef __OPTIMIZE__
  info += ", optimized";
#else
  info += ", NOT optimized (-O0): numbers are meaningless";
#endif
  return info;
}

const Measurement* FindPeer(const BenchReport& report, const Measurement& m,
                            const std::string& system) {
  for (const Measurement& other : report.results) {
    if (other.system == system && SameCase(other, m)) return &other;
  }
  return nullptr;
}

namespace {

void PrintHeader(const BenchReport& report, std::FILE* out) {
  const MachineInfo& machine = report.machine;
  std::fprintf(out, "gpkv-bench: %s\n", report.suite.c_str());
  std::fprintf(out, "machine:  %s, %d cores / %d hardware threads (%d usable), %s RAM, %s\n",
               machine.cpu_model.c_str(), machine.cores, machine.hardware_threads,
               machine.usable_threads, GiB(machine.memory_bytes).c_str(), machine.kernel.c_str());
  std::fprintf(out,
               "load:     %s (load average at start: 1, 5, 15 min); other processes used %.2f "
               "cores on average during the run\n",
               machine.load_average.c_str(), report.other_cores);
  std::fprintf(out, "command:  %s\n", CommandLine().c_str());
  std::fprintf(out, "date:     %s (run took %.0f s)\n", report.date.c_str(), report.wall_seconds);
  std::fprintf(out, "build:    %s\n", BuildInfo().c_str());
  std::string config;
  for (const auto& item : report.config.items()) {
    if (!config.empty()) config += ", ";
    config += item.key() + " " +
              (item.value().is_string() ? item.value().get<std::string>() : item.value().dump());
  }
  std::fprintf(out, "config:   %s\n", config.c_str());
  for (const auto& [name, durability] : report.systems) {
    std::fprintf(out, "system:   %-15s %s\n", name.c_str(), durability.c_str());
  }
  std::fprintf(out, "\n");
}

// The results table: one group of rows per case, its systems beside each
// other. *left receives the number of left-aligned columns.
std::vector<std::vector<std::string>> ResultRows(const BenchReport& report, size_t* left) {
  bool several_sizes = false;
  for (const Measurement& m : report.results) {
    several_sizes |= m.key_size != report.results.front().key_size ||
                     m.value_size != report.results.front().value_size;
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"workload", "keys", "system"};
  if (several_sizes) header.insert(header.begin(), "K/V bytes");
  for (const char* column :
       {"batch", "ops", "Mops/s", "vs gpkv", "p50 us", "p99 us", "Mops/s@p50", ""}) {
    header.push_back(column);
  }
  *left = several_sizes ? 4 : 3;
  rows.push_back(header);
  // One group per case (in the order the cases first ran), its systems
  // beside each other.
  std::vector<const Measurement*> cases;
  for (const Measurement& m : report.results) {
    bool seen = false;
    for (const Measurement* c : cases) seen |= SameCase(*c, m);
    if (!seen) cases.push_back(&m);
  }
  std::vector<const Measurement*> ordered;
  for (const Measurement* c : cases) {
    for (const Measurement& m : report.results) {
      if (SameCase(*c, m)) ordered.push_back(&m);
    }
  }
  const Measurement* previous = nullptr;
  for (const Measurement* pm : ordered) {
    const Measurement& m = *pm;
    if (previous != nullptr && !SameCase(*previous, m)) rows.push_back({});
    previous = &m;
    std::vector<std::string> row = {m.workload, m.distribution, m.system};
    if (several_sizes) {
      row.insert(row.begin(), std::to_string(m.key_size) + "/" + std::to_string(m.value_size));
    }
    const Measurement* gpkv = FindPeer(report, m, "gpkv");
    std::string ratio = "-";
    if (gpkv != nullptr && gpkv->mops() > 0.0 && m.error.empty()) {
      ratio = FormatFixed(m.mops() / gpkv->mops(), m.mops() / gpkv->mops() < 0.1 ? 4 : 2);
    }
    std::string flag = !m.error.empty() ? "ERROR: " + m.error
                       : !m.complete    ? "(stopped at time limit)"
                                        : "";
    for (const std::string& cell :
         {std::to_string(m.batch_size), std::to_string(m.ops), FormatMops(m.mops()), ratio,
          FormatMicros(m.p50_us), FormatMicros(m.p99_us), FormatMops(m.mops_at_p50()), flag}) {
      row.push_back(cell);
    }
    rows.push_back(row);
  }
  return rows;
}

void PrintTrailer(const BenchReport& report, std::FILE* out) {
  if (!report.facts.empty()) {
    std::fprintf(out, "\ntables:\n");
    for (const FactsEntry& entry : report.facts) {
      std::string text;
      for (const auto& [name, value] : entry.facts) text += " " + name + " " + value;
      std::fprintf(out, "  %-14s %-11s %s:%s\n", entry.system.c_str(), entry.when.c_str(),
                   entry.config.c_str(), text.c_str());
    }
  }
  if (!report.lines.empty()) {
    std::fprintf(out, "\n");
    for (const std::string& line : report.lines) std::fprintf(out, "%s\n", line.c_str());
  }
  if (!report.ratios.empty()) {
    std::fprintf(out, "\nratios:\n");
    for (const Ratio& ratio : report.ratios) {
      std::fprintf(out, "  %s\n", ratio.text.c_str());
      if (!ratio.why.empty()) std::fprintf(out, "      %s\n", ratio.why.c_str());
    }
  }
  if (!report.notes.empty()) {
    std::fprintf(out, "\nnotes:\n");
    for (const std::string& note : report.notes) std::fprintf(out, "  - %s\n", note.c_str());
  }
}

}  // namespace

void PrintText(const BenchReport& report, std::FILE* out) {
  PrintHeader(report, out);
  size_t left = 0;
  PrintColumns(ResultRows(report, &left), left, out);
  std::fprintf(out,
               "\nMops/s = ops / the sum of the batch times; vs gpkv = Mops/s / gpkv's Mops/s "
               "in the same run;\np50 / p99 us = batch latency; Mops/s@p50 = batch size / p50 "
               "(the median batch's rate,\nlittle moved by batches that other work on the "
               "machine stretched).\n");

  PrintTrailer(report, out);
}

void PrintJson(const BenchReport& report, std::FILE* out) {
  const MachineInfo& machine = report.machine;
  nlohmann::ordered_json json;
  json["tool"] = "gpkv-bench";
  json["suite"] = report.suite;
  json["command"] = CommandLine();
  json["date"] = report.date;
  json["wall_seconds"] = report.wall_seconds;
  json["other_processes_cores"] = report.other_cores;
  json["build"] = BuildInfo();
  json["machine"] = {{"cpu_model", machine.cpu_model},
                     {"cores", machine.cores},
                     {"hardware_threads", machine.hardware_threads},
                     {"usable_threads", machine.usable_threads},
                     {"memory_bytes", machine.memory_bytes},
                     {"kernel", machine.kernel},
                     {"load_average", machine.load_average},
                     {"hostname", machine.hostname}};
  json["config"] = report.config;
  json["systems"] = nlohmann::ordered_json::array();
  for (const auto& [name, durability] : report.systems) {
    json["systems"].push_back({{"name", name}, {"durability", durability}});
  }
  json["results"] = nlohmann::ordered_json::array();
  for (const Measurement& m : report.results) {
    const Measurement* gpkv = FindPeer(report, m, "gpkv");
    nlohmann::ordered_json row = {{"suite", m.suite},
                                  {"workload", m.workload},
                                  {"distribution", m.distribution},
                                  {"system", m.system},
                                  {"key_size", m.key_size},
                                  {"value_size", m.value_size},
                                  {"batch_size", m.batch_size},
                                  {"ops", m.ops},
                                  {"batches", m.batches},
                                  {"seconds", m.seconds},
                                  {"mops", m.mops()},
                                  {"mops_at_p50", m.mops_at_p50()},
                                  {"p50_batch_us", m.p50_us},
                                  {"p99_batch_us", m.p99_us},
                                  {"max_batch_us", m.max_us},
                                  {"reads", m.reads},
                                  {"found", m.found},
                                  {"writes", m.writes},
                                  {"erases", m.erases},
                                  {"erased", m.erased},
                                  {"read_digest", m.read_digest},
                                  {"complete", m.complete},
                                  {"error", m.error}};
    if (gpkv != nullptr && gpkv->mops() > 0.0) {
      row["ratio_to_gpkv"] = m.mops() / gpkv->mops();
    } else {
      row["ratio_to_gpkv"] = nullptr;
    }
    json["results"].push_back(row);
  }
  json["tables"] = nlohmann::ordered_json::array();
  for (const FactsEntry& entry : report.facts) {
    nlohmann::ordered_json facts = nlohmann::ordered_json::object();
    for (const auto& [name, value] : entry.facts) facts[name] = value;
    json["tables"].push_back({{"system", entry.system},
                              {"when", entry.when},
                              {"config", entry.config},
                              {"facts", facts}});
  }
  json["ratios"] = nlohmann::ordered_json::array();
  for (const Ratio& ratio : report.ratios) {
    json["ratios"].push_back(
        {{"name", ratio.name},
         {"comparison", ratio.comparison},
         {"value", ratio.measured ? nlohmann::ordered_json(ratio.value) : nullptr},
         {"measured", ratio.measured},
         {"why", ratio.why}});
  }
  json["sections"] = report.sections;
  json["notes"] = report.notes;
  std::fprintf(out, "%s\n", json.dump(2).c_str());
}

}  // namespace gpkv::bench
