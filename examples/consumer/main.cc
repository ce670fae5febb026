// A tiny program against the installed gpkv: creates a pool in a temporary
// directory, writes a few pairs, reads them back (and one key that is not
// there), reopens the pool and reads again. Exits 0 when every answer is
// right, 1 otherwise.
#include <gpkv/gpkv.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

bool Check(const gpkv::Status& status, const char* what) {
  if (status.ok()) return true;
  std::fprintf(stderr, "gpkv_consumer: %s: %s\n", what, status.ToString().c_str());
  return false;
}

// Reads keys 1..count and key 1000 (never written) and checks the answers.
bool ReadBack(gpkv::Table* table, uint64_t count) {
  std::vector<uint64_t> keys;
  for (uint64_t key = 1; key <= count; ++key) keys.push_back(key);
  keys.push_back(1000);
  std::vector<uint64_t> values(keys.size());
  std::vector<uint8_t> found(keys.size());
  if (!Check(table->Get(keys, values, found), "Get")) return false;
  for (uint64_t i = 0; i < count; ++i) {
    if (!found[i] || values[i] != keys[i] * 100) {
      std::fprintf(stderr, "gpkv_consumer: key %llu: wrong answer\n",
                   static_cast<unsigned long long>(keys[i]));
      return false;
    }
  }
  if (found[count]) {
    std::fprintf(stderr, "gpkv_consumer: key 1000 found but never written\n");
    return false;
  }
  return true;
}

bool Run(const std::string& path) {
  constexpr uint64_t kCount = 16;
  gpkv::Options options;
  options.create_if_missing = true;
  options.pool_size = uint64_t{64} << 20;
  options.backend = gpkv::Backend::kCpu;
  {
    auto db = gpkv::DB::Open(path, options);
    if (!Check(db.status(), "DB::Open (create)")) return false;
    gpkv::TableOptions table_options;
    table_options.expected_keys = 1024;
    auto table = (*db)->CreateTable("example", table_options);
    if (!Check(table.status(), "CreateTable")) return false;
    std::vector<uint64_t> keys;
    std::vector<uint64_t> values;
    for (uint64_t key = 1; key <= kCount; ++key) {
      keys.push_back(key);
      values.push_back(key * 100);
    }
    if (!Check((*table)->Put(keys, values), "Put")) return false;
    if (!ReadBack(*table, kCount)) return false;
  }
  options.create_if_missing = false;
  auto db = gpkv::DB::Open(path, options);
  if (!Check(db.status(), "DB::Open (reopen)")) return false;
  auto table = (*db)->OpenTable("example");
  if (!Check(table.status(), "OpenTable")) return false;
  return ReadBack(*table, kCount);
}

}  // namespace

int main() {
  char dir_template[] = "/tmp/gpkv-consumer-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    std::perror("gpkv_consumer: mkdtemp");
    return 1;
  }
  std::string path = std::string(dir) + "/pool.gpkv";
  bool ok = Run(path);
  unlink(path.c_str());
  rmdir(dir);
  std::printf("gpkv_consumer (gpkv %s): %s\n", GPKV_VERSION_STRING, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
