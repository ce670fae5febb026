// LMDB as a peer of the ordered suite ("lmdb"): the embedded memory-mapped
// B+tree most users of an ordered key-value store know. Durable as gpkv is:
// each insert batch is one write transaction, committed with LMDB's default
// sync (the data and meta pages are fsync'ed before mdb_txn_commit returns).
// Reads run on the driver's threads, one read-only transaction per thread
// per call; ranges and counts walk a cursor (MDB_SET_RANGE, then MDB_NEXT
// while the key is <= hi). Keys are the gpkv keys byte-reversed (big-endian),
// so LMDB's bytewise order is gpkv's unsigned little-endian integer order and
// both return the same pairs (the report checks it).
#include <lmdb.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_ordered.h"

namespace gpkv::bench {
namespace {

Status FromLmdb(int rc, const std::string& what) {
  if (rc == MDB_SUCCESS) return Status::OK();
  const std::string message = "lmdb: " + what + ": " + mdb_strerror(rc);
  return rc == MDB_MAP_FULL ? Status::PoolFull(message) : Status::IOError(message);
}

class LmdbOrderedDriver : public OrderedDriver {
 public:
  LmdbOrderedDriver(std::string path, MDB_env* env, MDB_dbi dbi, const DriverConfig& config)
      : path_(std::move(path)),
        env_(env),
        dbi_(dbi),
        key_size_(config.key_size),
        value_size_(config.value_size),
        threads_(std::max(1, config.threads)) {}

  ~LmdbOrderedDriver() override {
    mdb_dbi_close(env_, dbi_);
    mdb_env_close(env_);
    ::unlink(path_.c_str());
    ::unlink((path_ + "-lock").c_str());
  }

  Status Insert(const uint8_t* keys, const uint8_t* values, size_t n) override {
    MDB_txn* txn = nullptr;
    GPKV_RETURN_IF_ERROR(FromLmdb(mdb_txn_begin(env_, nullptr, 0, &txn), "begin write"));
    std::vector<char> key(key_size_);
    for (size_t i = 0; i < n; ++i) {
      Encode(keys + i * key_size_, key.data());
      MDB_val k{key_size_, key.data()};
      MDB_val v{value_size_, const_cast<uint8_t*>(values + i * value_size_)};
      int rc = mdb_put(txn, dbi_, &k, &v, 0);
      if (rc != MDB_SUCCESS) {
        mdb_txn_abort(txn);
        return FromLmdb(rc, "put");
      }
    }
    return FromLmdb(mdb_txn_commit(txn), "commit");
  }

  Status Get(const uint8_t* keys, size_t n, uint8_t* values, uint8_t* found) override {
    return ForParts(n, [&](MDB_txn* txn, size_t begin, size_t end) -> Status {
      std::vector<char> key(key_size_);
      for (size_t i = begin; i < end; ++i) {
        Encode(keys + i * key_size_, key.data());
        MDB_val k{key_size_, key.data()}, v{0, nullptr};
        uint8_t* value = values + i * value_size_;
        int rc = mdb_get(txn, dbi_, &k, &v);
        found[i] = rc == MDB_SUCCESS;
        if (rc == MDB_SUCCESS) {
          std::memcpy(value, v.mv_data, std::min<size_t>(v.mv_size, value_size_));
        } else if (rc == MDB_NOTFOUND) {
          std::memset(value, 0, value_size_);
        } else {
          return FromLmdb(rc, "get");
        }
      }
      return Status::OK();
    });
  }

  Status Count(const uint8_t* lo, const uint8_t* hi, size_t n, uint64_t* counts) override {
    return ForParts(n, [&](MDB_txn* txn, size_t begin, size_t end) -> Status {
      return Scan(txn, lo, hi, begin, end, counts,
                  [&](size_t query, const MDB_val&, const MDB_val&) { ++counts[query]; });
    });
  }

  Status Range(const uint8_t* lo, const uint8_t* hi, size_t n, RangeDigest* out) override {
    // One cache line per thread's digest: neighbouring digests written per
    // pair from different threads would bounce one line between the cores.
    struct alignas(64) Part {
      RangeDigest digest;
    };
    std::vector<Part> parts(threads_);
    Status status = ForParts(n, [&](MDB_txn* txn, size_t begin, size_t end) -> Status {
      RangeDigest part;
      // The pairs are copied out as gpkv's Range returns them.
      std::vector<uint8_t> key(key_size_), value(value_size_);
      Status scanned =
          Scan(txn, lo, hi, begin, end, nullptr, [&](size_t, const MDB_val& k, const MDB_val& v) {
            Encode(static_cast<const uint8_t*>(k.mv_data), reinterpret_cast<char*>(key.data()));
            std::memcpy(value.data(), v.mv_data, std::min<size_t>(v.mv_size, value_size_));
            ++part.pairs;
            part.digest += PairHash(key.data(), key_size_, value.data(), value_size_);
          });
      parts[omp_get_thread_num()].digest = part;
      return scanned;
    });
    for (const Part& part : parts) {
      out->pairs += part.digest.pairs;
      out->digest += part.digest.digest;
    }
    return status;
  }

  std::vector<std::pair<std::string, std::string>> Facts() override {
    MDB_stat stat{};
    MDB_envinfo info{};
    std::vector<std::pair<std::string, std::string>> facts;
    if (mdb_env_stat(env_, &stat) == MDB_SUCCESS) {
      facts.push_back({"lmdb.entries", std::to_string(stat.ms_entries)});
      facts.push_back({"lmdb.depth", std::to_string(stat.ms_depth)});
      facts.push_back({"lmdb.page-size", std::to_string(stat.ms_psize)});
      if (mdb_env_info(env_, &info) == MDB_SUCCESS) {
        facts.push_back(
            {"lmdb.bytes", std::to_string((info.me_last_pgno + 1) * uint64_t{stat.ms_psize})});
      }
    }
    return facts;
  }

 private:
  // gpkv key (little-endian words, the last most significant) -> big-endian
  // bytes; the same reversal decodes.
  void Encode(const uint8_t* key, char* out) const { BigEndianKey(key, key_size_, out); }

  // Splits [0, n) over the threads; each part runs in a read-only
  // transaction of its own thread.
  template <typename Part>
  Status ForParts(size_t n, const Part& part) {
    return ForThreadShares(threads_, n, [&](size_t begin, size_t end) -> Status {
      MDB_txn* txn = nullptr;
      GPKV_RETURN_IF_ERROR(FromLmdb(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "begin read"));
      Status status = part(txn, begin, end);
      mdb_txn_abort(txn);
      return status;
    });
  }

  // Visits the pairs of queries [begin, end) with one cursor: the first key
  // >= lo, then the next ones while <= hi. counts (may be null) is zeroed
  // first.
  template <typename Visit>
  Status Scan(MDB_txn* txn, const uint8_t* lo, const uint8_t* hi, size_t begin, size_t end,
              uint64_t* counts, const Visit& visit) {
    MDB_cursor* cursor = nullptr;
    GPKV_RETURN_IF_ERROR(FromLmdb(mdb_cursor_open(txn, dbi_, &cursor), "cursor"));
    std::vector<char> low(key_size_), high(key_size_);
    Status status;
    for (size_t query = begin; query < end && status.ok(); ++query) {
      if (counts != nullptr) counts[query] = 0;
      Encode(lo + query * key_size_, low.data());
      Encode(hi + query * key_size_, high.data());
      MDB_val k{key_size_, low.data()}, v{0, nullptr};
      int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
      while (rc == MDB_SUCCESS && std::memcmp(k.mv_data, high.data(), key_size_) <= 0) {
        visit(query, k, v);
        rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
      }
      if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) status = FromLmdb(rc, "cursor walk");
    }
    mdb_cursor_close(cursor);
    return status;
  }

  std::string path_;
  MDB_env* env_;
  MDB_dbi dbi_;
  uint32_t key_size_;
  uint32_t value_size_;
  int threads_;
};

}  // namespace

Result<std::unique_ptr<OrderedDriver>> CreateLmdbOrderedDriver(const DriverConfig& config) {
  // Beside gpkv's pool file, in the same folder (the same file system).
  const std::string path = config.pool_path + ".lmdb";
  ::unlink(path.c_str());
  ::unlink((path + "-lock").c_str());
  MDB_env* env = nullptr;
  GPKV_RETURN_IF_ERROR(FromLmdb(mdb_env_create(&env), "create environment"));
  auto fail = [&](int rc, const std::string& what) {
    mdb_env_close(env);
    return FromLmdb(rc, what);
  };
  // The map is address space, not memory: as large as gpkv's pool, and at
  // least 1 GiB (a B+tree of small pairs takes about twice their bytes).
  const uint64_t map_size = std::max<uint64_t>(2 * config.pool_size, uint64_t{1} << 30);
  int rc = mdb_env_set_mapsize(env, map_size);
  if (rc == MDB_SUCCESS) rc = mdb_env_set_maxreaders(env, std::max(126, 2 * config.threads));
  if (rc != MDB_SUCCESS) return fail(rc, "configure");
  rc = mdb_env_open(env, path.c_str(), MDB_NOSUBDIR | MDB_NORDAHEAD, 0644);
  if (rc != MDB_SUCCESS) return fail(rc, "open " + path);
  MDB_txn* txn = nullptr;
  rc = mdb_txn_begin(env, nullptr, 0, &txn);
  if (rc != MDB_SUCCESS) return fail(rc, "begin");
  MDB_dbi dbi = 0;
  rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
  if (rc != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    return fail(rc, "open the database");
  }
  rc = mdb_txn_commit(txn);
  if (rc != MDB_SUCCESS) return fail(rc, "commit the open");
  return std::unique_ptr<OrderedDriver>(
      std::make_unique<LmdbOrderedDriver>(path, env, dbi, config));
}

}  // namespace gpkv::bench
