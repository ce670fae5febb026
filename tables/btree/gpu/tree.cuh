// The GPU B-link tree of the volatile ordered table: node layout, latches
// and version lists, as device functions the kernels (backend.cu) share.
//
// Nodes. A node holds up to kFanout entries (key, 32-bit pointer), sorted,
// a count, leaf and has-high flags, a high key (every key of the node is
// below it, when the node has one: the rightmost node of a level has none),
// a right link and a left link (kNone at the ends of a level), and a latch.
// With 8-byte keys a node is 128 bytes, one load of 8 lanes: lane i holds
// entry i. Wider keys (16, 32 bytes) keep the same layout with their keys inline,
// so their nodes span 256 or 384 bytes. Every key value is legal: empty
// slots are those past the count, and the rightmost nodes are told by the
// has-high flag, not by a sentinel key.
//
// A leaf's entry points at the head of its key's version list; an internal
// node's entry i points at the child holding the keys >= key i (and below
// key i + 1, or the node's high key); key 0 of an internal node is its low
// bound, never compared (the leftmost child takes every smaller key).
//
// Latches. The latch is a sequence lock: odd while a writer holds it, bumped
// by two on every release. A write group (the kFanout lanes that work on
// one write, NodeLanes) reads a node without latching it, then checks that
// the latch still reads the same even value (ReadNode: acquire loads and one
// fence, see below); it takes the latch with one atomicCAS from that value,
// so a taken latch means the node is as the group read it. Before a group
// works its lanes' operations, each lane finds its own operation's leaf
// alone, every node it reads checked the same way (WriteLeafOf,
// kernels.cuh), and the group starts each operation at that leaf. A group
// that finds a latch held or changed starts its operation
// again from that leaf (a node's low bound never changes), or from the root
// where the lane found none, after a short pause (no waiting on a latch).
// Reads run when no write does (the core's lock) and take no latches, and
// each is one lane's: the lane goes down to its query's leaf and finishes
// the query alone, a node one trip to memory (LaneNode), beside the other
// lanes' queries; only a range of many pairs is filled by the whole warp.
//
// A put goes down first without splitting; one whose leaf is full and lacks
// its key splits the leaf under the parent its lane's descent saw, if that
// parent is unchanged and has room, and else starts again from the root and
// splits full nodes on its way down (proactive splitting): the group latches
// the full node and its parent (as it read them), moves the upper half into
// a new right sibling, links it (right link, high key, the sibling's left
// link) and puts its first key into the parent, then goes on from the leaf
// it split, or from the root again after an inner node's split. A full root
// gets a new root above it. A group that finds its key at or past a node's
// high key follows the right link (the B-link rule), so a split never hides
// a key from a descent.
//
// Versions. A leaf entry's pointer is the index of its key's newest version
// in the version pool; older versions follow through `next`, newest first.
// The head stays where the leaf points: a version kept for a snapshot is
// copied to a fresh slot behind the head, which then takes the new write.
// Values of up to 8 bytes sit in the version; larger ones in the value cell
// of the version's slot. Slots come from a free list (filled by the slots
// freed in the previous batches) and past it from the pool's unused end.
//
// For the .cu files of tables/btree/gpu/ only (CUDA device code).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <cuda/ptx>

#include "gpu/warp_work_sharing.cuh"
#include "tables/btree/versions.h"

namespace gpkv::btree::gpu {

namespace warp = ::gpkv::gpu::warp;

// A launch's threads, for the grid-stride loops of the kernels.
__device__ __forceinline__ uint64_t ThreadIndex() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ uint64_t ThreadCount() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

constexpr uint32_t kNone = 0xffffffffu;
constexpr uint32_t kFanout = 8;             // entries per node
constexpr uint32_t kSplitAt = kFanout / 2;  // a split keeps entries [0, kSplitAt)
// Entries per node of a bulk build: room for two more in each, so that the
// puts after it do not all split full nodes at once.
constexpr uint32_t kBulkFill = kFanout - 2;
constexpr uint32_t kCountMask = 0xffu;
constexpr uint32_t kLeafFlag = 1u << 8;
constexpr uint32_t kHighFlag = 1u << 9;

template <uint32_t kKeyWords>
struct Key {
  uint64_t words[kKeyWords];
};

template <uint32_t kKeyWords>
__host__ __device__ __forceinline__ bool Less(const Key<kKeyWords>& a, const Key<kKeyWords>& b) {
  // Unrolled, as every loop over a key's words: a word indexed by a loop
  // counter would keep the key (and the View holding it) in local memory.
#pragma unroll
  for (uint32_t rank = 0; rank < kKeyWords; ++rank) {
    const uint32_t word = kKeyWords - 1 - rank;
    if (a.words[word] != b.words[word]) return a.words[word] < b.words[word];
  }
  return false;
}

template <uint32_t kKeyWords>
__host__ __device__ __forceinline__ bool Equal(const Key<kKeyWords>& a, const Key<kKeyWords>& b) {
#pragma unroll
  for (uint32_t word = 0; word < kKeyWords; ++word) {
    if (a.words[word] != b.words[word]) return false;
  }
  return true;
}

template <uint32_t kKeyWords>
struct alignas(128) Node {
  uint32_t latch;  // sequence lock: odd while held
  uint32_t meta;   // count | kLeafFlag | kHighFlag
  uint32_t link;   // right sibling, or kNone
  uint32_t left;   // left sibling, or kNone
  Key<kKeyWords> high;
  Key<kKeyWords> keys[kFanout];
  uint32_t pointers[kFanout];
};
static_assert(sizeof(Node<1>) == 128, "an 8-byte-key node is one 128-byte line");

// One version: its timestamp and tombstone bit in `stamp` (timestamp << 1 |
// tombstone), a value of up to 8 bytes in `payload`, the next older version.
struct Version {
  uint64_t stamp;
  uint64_t payload;
  uint32_t next;
  uint32_t unused;
};

__host__ __device__ __forceinline__ uint64_t Stamp(uint64_t timestamp, bool tombstone) {
  return timestamp << 1 | (tombstone ? 1 : 0);
}
__host__ __device__ __forceinline__ uint64_t TimestampOf(uint64_t stamp) { return stamp >> 1; }
__host__ __device__ __forceinline__ bool IsTombstone(uint64_t stamp) { return (stamp & 1) != 0; }

// The counters a batch updates on the device (Stats, and what the host needs
// between launches).
struct Counters {
  unsigned long long live_keys;
  unsigned long long versions;
  unsigned long long tombstones;
  unsigned long long reclaimed;
  unsigned long long leaf_entries;  // keys in the leaves (live or not)
  unsigned long long nodes;         // nodes handed out
  unsigned long long taken;         // version slots handed out in this batch
  unsigned long long freed;         // version slots freed in this batch
  unsigned long long out_of_nodes;  // a split found no node left
  unsigned long long handed_out;    // a write launch's operations handed to its groups
};

// What every kernel gets: the tree, the version pool and its free lists.
template <uint32_t kKeyWords>
struct Tree {
  Node<kKeyWords>* nodes;
  uint32_t node_capacity;
  uint32_t* root;
  Version* versions;
  uint8_t* cells;  // value_size bytes per slot, for values of more than 8 bytes
  uint32_t value_size;
  const uint32_t* free_slots;  // free_count slots to take from the end
  uint64_t free_count;
  uint64_t used;          // slots past the free list: [used, capacity) is unused
  uint32_t* freed_slots;  // the slots this batch frees
  Counters* counters;
};

// Changes to the counters that a thread gathers and adds once (a write
// group's summed into its lane 0 first), so that the operations of a launch
// do not all meet on the counters' few addresses.
struct Deltas {
  long long live_keys = 0;
  long long versions = 0;
  long long tombstones = 0;
  long long reclaimed = 0;
  long long leaf_entries = 0;

  // Every lane's changes summed into each lane of its group (NodeLanes),
  // before lane 0 adds them.
  template <typename Group>
  __device__ void SumOver(const Group& group) {
    for (uint32_t offset = 1; offset < Group::kWidth; offset *= 2) {
      live_keys += group.ShuffleXor(live_keys, offset);
      versions += group.ShuffleXor(versions, offset);
      tombstones += group.ShuffleXor(tombstones, offset);
      reclaimed += group.ShuffleXor(reclaimed, offset);
      leaf_entries += group.ShuffleXor(leaf_entries, offset);
    }
  }

  __device__ void AddTo(Counters* counters) const {
    Add(&counters->live_keys, live_keys);
    Add(&counters->versions, versions);
    Add(&counters->tombstones, tombstones);
    Add(&counters->reclaimed, reclaimed);
    Add(&counters->leaf_entries, leaf_entries);
  }

 private:
  __device__ static void Add(unsigned long long* counter, long long delta) {
    if (delta != 0) atomicAdd(counter, static_cast<unsigned long long>(delta));
  }
};

// ---- node access ----

// Loads of nodes that writers may change at the same time go around the
// caches that are not coherent (volatile); reads without writers load plainly.
template <bool kShared, typename T>
__device__ __forceinline__ T Load(const T* address) {
  if constexpr (kShared) {
    return *const_cast<const volatile T*>(address);
  } else {
    return *address;
  }
}

template <bool kShared, uint32_t kKeyWords>
__device__ __forceinline__ Key<kKeyWords> LoadKey(const Key<kKeyWords>* address) {
  Key<kKeyWords> key;
#pragma unroll
  for (uint32_t word = 0; word < kKeyWords; ++word) {
    key.words[word] = Load<kShared>(&address->words[word]);
  }
  return key;
}

// A group's copy of a node (Lanes): the header in every lane, entry i in
// lane i (lanes past the count hold garbage).
template <uint32_t kKeyWords>
struct View {
  uint32_t latch;
  uint32_t meta;
  uint32_t link;
  uint32_t left;
  Key<kKeyWords> high;
  Key<kKeyWords> key;
  uint32_t pointer;

  __device__ uint32_t count() const { return meta & kCountMask; }
  __device__ bool leaf() const { return (meta & kLeafFlag) != 0; }
  __device__ bool has_high() const { return (meta & kHighFlag) != 0; }
  // Whether `key` belongs right of this node (at or past its high key).
  __device__ bool PastHigh(const Key<kKeyWords>& probe) const {
    return has_high() && !Less(probe, high);
  }
};

// ---- the latch as a sequence lock ----
//
// A reader beside writers checks a node read without latching it: the latch
// loaded with acquire before the node's words, an acquire fence after them,
// then the latch again. A writer takes the latch (odd) and fences before its
// first store to the node, and fences after its last store before the
// release (TryLatch, Unlatch). If a load of the node saw a store of a writer,
// the writer's fence before that store and the reader's fence after the load
// synchronize, so the latch load after the reader's fence sees the writer's
// odd value or a later one: the check fails. If the check passes, the first
// acquire load saw the release of the last writer before the read, and the
// node's loads saw that writer's stores. The node's words are loaded
// volatile (strong loads past the L1 cache, which is not coherent), so the
// fence orders them. One fence per node read instead of a full (sequentially
// consistent) fence before and after it: the acquire load needs none.

// The latch word (or any word a writer publishes after a fence: the root),
// loaded with acquire at device scope.
__device__ __forceinline__ uint32_t LoadAcquire(const uint32_t* address) {
  return cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*const_cast<uint32_t*>(address))
      .load(cuda::memory_order_acquire);
}

// Orders this thread's loads before it (a node's words) before its loads
// after it (the latch's second load). From sm_90 on it is an acquire fence
// proper (fence.acquire): the acq_rel fence that atomic_thread_fence makes
// of an acquire also waits for the thread's earlier stores, and that wait
// was a tenth of the write kernel's stalls.
__device__ __forceinline__ void AcquireFence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cuda::ptx::fence(cuda::ptx::sem_acquire, cuda::ptx::scope_gpu);
#else
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
#endif
}

// A writer's fence (acquire and release, device scope): after it takes a
// latch (its stores to the node come after the odd latch, and its loads see
// the last holder's stores), before it releases one, and between writing a
// new node and linking it (Split). Every pattern of the protocol is a
// release matched by an acquire (the sequence lock above, the latch, the
// publication of a node or the root); none needs a store ordered before a
// later load of another address, so no sequentially consistent fence
// (__threadfence, fence.sc) is needed, and this one costs less.
__device__ __forceinline__ void WriterFence() {
  cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_device);
}

// The lanes that work on one node together: the whole warp (the reads'
// scans), or a group of kFanout consecutive lanes (the writes). A node has
// kFanout entries, one a lane, so a group that size holds all of it, and a
// warp works on 32 / kFanout writes at a time instead of one: each write is a
// chain of trips to memory (the node, its latch, its version), and a warp
// with one in flight left its multiprocessor waiting on them. `rank`: this
// lane's place in its group; shuffles and ballots name and count lanes by
// rank.
template <uint32_t kWidth_>
struct Lanes {
  static constexpr uint32_t kWidth = kWidth_;
  static_assert(kWidth == warp::kWarpSize || kWidth == kFanout, "a warp or a node's width");
  uint32_t rank;
  uint32_t first;  // the group's first lane in the warp
  unsigned mask;

  __device__ __forceinline__ Lanes() {
    const uint32_t lane = warp::LaneId();
    rank = lane % kWidth;
    first = lane - rank;
    if constexpr (kWidth == warp::kWarpSize) {
      mask = warp::kFullMask;
    } else {
      mask = ((1u << kWidth) - 1) << first;
    }
  }
  // `value` as lane `source` of the group holds it.
  template <typename T>
  __device__ __forceinline__ T Shuffle(T value, uint32_t source) const {
    return __shfl_sync(mask, value, source, kWidth);
  }
  // `value` as the lane whose rank differs from this one's in the bits of
  // `bits` holds it.
  template <typename T>
  __device__ __forceinline__ T ShuffleXor(T value, uint32_t bits) const {
    return __shfl_xor_sync(mask, value, bits, kWidth);
  }
  // Bit r: whether the group's lane r's predicate holds.
  __device__ __forceinline__ unsigned Ballot(bool predicate) const {
    const unsigned ballot = __ballot_sync(mask, predicate);
    if constexpr (kWidth == warp::kWarpSize) {
      return ballot;
    } else {
      return (ballot >> first) & ((1u << kWidth) - 1);
    }
  }
  __device__ __forceinline__ bool All(bool predicate) const { return __all_sync(mask, predicate); }
  __device__ __forceinline__ void Sync() const { __syncwarp(mask); }
};
using Warp = Lanes<warp::kWarpSize>;
using NodeLanes = Lanes<kFanout>;

// Reads node `index` into `view` (all lanes of the group). kShared: returns
// false when its latch was held, or changed while the group read (the view
// is torn), unless `latched` (the group holds the latch itself). Without
// writers (!kShared) the node cannot change. Either way every lane loads the
// header itself (one broadcast request) beside its entry: the group's loads
// of the node go out together, one trip to memory, with no shuffles after
// them.
//
// kShared: each lane checks its own loads against the latch (above), and
// the verdict is the whole group's: every lane read the latch value lane 0
// read, before and after. The sync first orders what any lane saw before
// (the index of this node, in a pointer it loaded and fenced) before every
// lane's loads of the node.
template <bool kShared, uint32_t kKeyWords, uint32_t kWidth>
__device__ __forceinline__ bool ReadNode(const Tree<kKeyWords>& tree, uint32_t index,
                                         View<kKeyWords>* view, const Lanes<kWidth>& lanes,
                                         bool latched = false) {
  const Node<kKeyWords>* node = &tree.nodes[index];
  const uint32_t lane = lanes.rank;
  if constexpr (!kShared) {
    view->meta = node->meta;
    view->link = node->link;
    view->left = node->left;
    view->high = LoadKey<false>(&node->high);
    if (lane < kFanout) {
      view->key = LoadKey<false>(&node->keys[lane]);
      view->pointer = node->pointers[lane];
    }
    return true;
  } else {
    lanes.Sync();
    const uint32_t latch = latched ? Load<true>(&node->latch) : LoadAcquire(&node->latch);
    view->latch = lanes.Shuffle(latch, 0);
    if (!latched && !lanes.All(latch == view->latch && (latch & 1) == 0)) {
      return false;
    }
    view->meta = Load<true>(&node->meta);
    view->link = Load<true>(&node->link);
    view->left = Load<true>(&node->left);
    view->high = LoadKey<true>(&node->high);
    if (lane < kFanout) {
      view->key = LoadKey<true>(&node->keys[lane]);
      view->pointer = Load<true>(&node->pointers[lane]);
    }
    if (latched) return true;
    AcquireFence();
    return lanes.All(Load<true>(&node->latch) == view->latch);
  }
}

// The root as lane 0 reads it, in every lane. Acquire: a new root is
// written, fenced, then published (Split), so its words are there for the
// loads after this one (ReadNode's sync passes that on to every lane).
template <uint32_t kKeyWords, uint32_t kWidth>
__device__ __forceinline__ uint32_t LoadRoot(const Tree<kKeyWords>& tree,
                                             const Lanes<kWidth>& lanes) {
  uint32_t root = 0;
  if (lanes.rank == 0) root = LoadAcquire(tree.root);
  return lanes.Shuffle(root, 0);
}

// The child of an internal node's view that holds `key` (all lanes).
template <uint32_t kKeyWords, uint32_t kWidth>
__device__ __forceinline__ uint32_t ChildFor(const View<kKeyWords>& view, const Key<kKeyWords>& key,
                                             const Lanes<kWidth>& lanes) {
  const uint32_t lane = lanes.rank;
  const bool at_or_below = lane >= 1 && lane < view.count() && !Less(key, view.key);
  const uint32_t index = __popc(lanes.Ballot(at_or_below));
  return lanes.Shuffle(view.pointer, index);
}

// The lane whose key equals `key`, or kNone.
template <uint32_t kKeyWords, uint32_t kWidth>
__device__ __forceinline__ uint32_t FindInLeaf(const View<kKeyWords>& view,
                                               const Key<kKeyWords>& key,
                                               const Lanes<kWidth>& lanes) {
  const unsigned hit = lanes.Ballot(lanes.rank < view.count() && Equal(view.key, key));
  return hit == 0 ? kNone : static_cast<uint32_t>(__ffs(hit) - 1);
}

// ---- one lane alone on a node (reads: no writer beside them) ----

// A node as one lane reads it for its own query: every field in the lane's
// registers.
template <uint32_t kKeyWords>
struct LaneNode {
  uint32_t meta;
  uint32_t link;
  uint32_t left;
  Key<kKeyWords> high;
  Key<kKeyWords> keys[kFanout];
  uint32_t pointers[kFanout];

  __device__ uint32_t count() const { return meta & kCountMask; }
  __device__ bool leaf() const { return (meta & kLeafFlag) != 0; }
  // Whether `probe` belongs right of this node (at or past its high key).
  __device__ bool PastHigh(const Key<kKeyWords>& probe) const {
    return (meta & kHighFlag) != 0 && !Less(probe, high);
  }
  // The child of an internal node that holds `probe`: the last entry i >= 1
  // whose key is <= probe, else entry 0 (the node's low bound). The keys are
  // sorted, so every entry is compared and none waits for another.
  __device__ uint32_t ChildFor(const Key<kKeyWords>& probe) const {
    uint32_t child = pointers[0];
#pragma unroll
    for (uint32_t entry = 1; entry < kFanout; ++entry) {
      if (entry < count() && !Less(probe, keys[entry])) child = pointers[entry];
    }
    return child;
  }
};

// A 16-byte load: kShared, strong (volatile) past the L1 cache, as Load's
// of words that writers may change at the same time; else through the
// read-only cache.
template <bool kShared>
__device__ __forceinline__ uint4 LoadVector(const uint4* address) {
  if constexpr (kShared) {
    uint4 loaded;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(loaded.x), "=r"(loaded.y), "=r"(loaded.z), "=r"(loaded.w)
                 : "l"(address)
                 : "memory");
    return loaded;
  } else {
    return __ldg(address);
  }
}

// Reads node `index` into `node`, this lane alone. The node's bytes up to
// its last pointer go out as independent 16-byte loads, issued together (one
// trip to memory; with 8-byte keys the whole 128-byte node). A read (no
// writer runs beside it) loads through the read-only cache: a launch's loads
// through that cache see the writes of the launches before it. A writer's
// lane (kShared) loads past the L1 cache, and checks the node against its
// latch itself or holds the latch (WriteLeafOf). Every field is
// then taken from the loaded words at a fixed offset, so the node stays in
// registers.
template <bool kShared = false, uint32_t kKeyWords>
__device__ __forceinline__ void ReadLaneNode(const Tree<kKeyWords>& tree, uint32_t index,
                                             LaneNode<kKeyWords>* node) {
  using Layout = Node<kKeyWords>;
  constexpr uint32_t kBytes = offsetof(Layout, pointers) + sizeof(uint32_t) * kFanout;
  constexpr uint32_t kVectors = (kBytes + sizeof(uint4) - 1) / sizeof(uint4);
  static_assert(kVectors * sizeof(uint4) <= sizeof(Layout), "the loads stay inside the node");
  static_assert(offsetof(Layout, high) % sizeof(uint64_t) == 0 &&
                    offsetof(Layout, keys) % sizeof(uint64_t) == 0,
                "key words are whole 8-byte words of the node");
  uint32_t words[kVectors * 4];
  const uint4* vectors = reinterpret_cast<const uint4*>(&tree.nodes[index]);
#pragma unroll
  for (uint32_t vector = 0; vector < kVectors; ++vector) {
    const uint4 loaded = LoadVector<kShared>(&vectors[vector]);
    words[4 * vector] = loaded.x;
    words[4 * vector + 1] = loaded.y;
    words[4 * vector + 2] = loaded.z;
    words[4 * vector + 3] = loaded.w;
  }
  // The 64-bit word at byte `offset` of the node (little-endian halves).
  const auto word64 = [&](uint32_t offset) {
    const uint64_t low = words[offset / 4];
    const uint64_t high = words[offset / 4 + 1];
    return high << 32 | low;
  };
  node->meta = words[offsetof(Layout, meta) / 4];
  node->link = words[offsetof(Layout, link) / 4];
  node->left = words[offsetof(Layout, left) / 4];
#pragma unroll
  for (uint32_t word = 0; word < kKeyWords; ++word) {
    node->high.words[word] = word64(offsetof(Layout, high) + 8 * word);
  }
#pragma unroll
  for (uint32_t entry = 0; entry < kFanout; ++entry) {
#pragma unroll
    for (uint32_t word = 0; word < kKeyWords; ++word) {
      node->keys[entry].words[word] =
          word64(offsetof(Layout, keys) + 8 * (entry * kKeyWords + word));
    }
    node->pointers[entry] = words[offsetof(Layout, pointers) / 4 + entry];
  }
}

// Takes node `index`'s latch if it still reads `latch` (all lanes; true
// when taken).
template <uint32_t kKeyWords, uint32_t kWidth>
__device__ __forceinline__ bool TryLatch(const Tree<kKeyWords>& tree, uint32_t index,
                                         uint32_t latch, const Lanes<kWidth>& lanes) {
  bool taken = false;
  if (lanes.rank == 0) taken = atomicCAS(&tree.nodes[index].latch, latch, latch + 1) == latch;
  taken = lanes.Shuffle(taken, 0);
  if (taken) WriterFence();
  return taken;
}

// Releases a latch taken from `latch` (all lanes), after the lanes' writes.
template <uint32_t kKeyWords, uint32_t kWidth>
__device__ __forceinline__ void Unlatch(const Tree<kKeyWords>& tree, uint32_t index, uint32_t latch,
                                        const Lanes<kWidth>& lanes) {
  WriterFence();
  lanes.Sync();
  if (lanes.rank == 0) atomicExch(&tree.nodes[index].latch, latch + 2);
}

template <uint32_t kKeyWords>
__device__ __forceinline__ void StoreKey(Key<kKeyWords>* address, const Key<kKeyWords>& key) {
#pragma unroll
  for (uint32_t word = 0; word < kKeyWords; ++word) {
    *const_cast<volatile uint64_t*>(&address->words[word]) = key.words[word];
  }
}

template <typename T>
__device__ __forceinline__ void Store(T* address, T value) {
  *const_cast<volatile T*>(address) = value;
}

// ---- version slots (lane 0 of a write group, or one thread) ----

// The slot of the batch's taken-th take: from the end of the free list,
// then past `used`.
template <uint32_t kKeyWords>
__device__ __forceinline__ uint32_t SlotAt(const Tree<kKeyWords>& tree, unsigned long long taken) {
  if (taken < tree.free_count) return tree.free_slots[tree.free_count - 1 - taken];
  return static_cast<uint32_t>(tree.used + (taken - tree.free_count));
}

template <uint32_t kKeyWords>
__device__ __forceinline__ void FreeSlot(const Tree<kKeyWords>& tree, uint32_t slot) {
  const unsigned long long at = atomicAdd(&tree.counters->freed, 1ull);
  tree.freed_slots[at] = slot;
}

// The slots a write group's lane 0 takes for its (up to kFanout) operations,
// reserved with one atomicAdd on Counters::taken at the group's first take
// instead of one each: every operation left in the group may take one, so
// the reservation is their number, and what the group does not use goes to
// the freed slots at its end. Each operation takes at most one slot, so a
// launch reserves at most one per operation. The slots the group's
// operations free (an erased key's version, the versions a trim drops) are
// gathered the same way and handed out kFanout at a time, so that a batch
// of erases does not meet on Counters::freed once per operation. It lives
// in shared memory, one per group, so that the write kernel's registers do
// not grow.
struct SlotReserve {
  unsigned long long next;  // takes [next, end) reserved, not yet used
  unsigned long long end;
  uint32_t left;  // the group's operations not yet done, this one included
  uint32_t freed_count;
  uint32_t freed[kFanout];  // freed by the group, not yet handed out

  // A new group of `operations` (lane 0).
  __device__ void Start(uint32_t operations) {
    next = 0;
    end = 0;
    left = operations;
    freed_count = 0;
  }

  template <uint32_t kKeyWords>
  __device__ uint32_t Take(const Tree<kKeyWords>& tree) {
    if (next == end) {
      next = atomicAdd(&tree.counters->taken, static_cast<unsigned long long>(left));
      end = next + left;
    }
    return SlotAt(tree, next++);
  }

  // A slot an operation of the group frees.
  template <uint32_t kKeyWords>
  __device__ void Free(const Tree<kKeyWords>& tree, uint32_t slot) {
    if (freed_count == kFanout) Hand(tree, false);
    freed[freed_count++] = slot;
  }

  // The group's freed slots and its unused ones handed to the batch's freed
  // slots (lane 0, at the group's end).
  template <uint32_t kKeyWords>
  __device__ void Release(const Tree<kKeyWords>& tree) {
    Hand(tree, true);
  }

 private:
  // The freed slots, and (`unused`) the reserved ones not taken, handed out.
  // The reservation is kept until the group's end: the group's operations
  // left take from it, and a second one could pass the launch's slots.
  template <uint32_t kKeyWords>
  __device__ void Hand(const Tree<kKeyWords>& tree, bool unused) {
    const unsigned long long count = (unused ? end - next : 0) + freed_count;
    if (count == 0) return;
    unsigned long long at = atomicAdd(&tree.counters->freed, count);
    for (; unused && next < end; ++next) tree.freed_slots[at++] = SlotAt(tree, next);
    for (uint32_t i = 0; i < freed_count; ++i) tree.freed_slots[at++] = freed[i];
    freed_count = 0;
  }
};

// Copies `size` bytes from `source` to `target` in the widest words that
// the size and both addresses allow (16, 8, 4 or 1 bytes).
__device__ __forceinline__ void CopyBytes(uint8_t* target, const uint8_t* source, uint32_t size) {
  const uint64_t alignment =
      reinterpret_cast<uint64_t>(target) | reinterpret_cast<uint64_t>(source) | size;
  if (alignment % 16 == 0) {
    for (uint32_t at = 0; at < size; at += 16) {
      *reinterpret_cast<uint4*>(target + at) = *reinterpret_cast<const uint4*>(source + at);
    }
  } else if (alignment % 8 == 0) {
    for (uint32_t at = 0; at < size; at += 8) {
      *reinterpret_cast<uint64_t*>(target + at) = *reinterpret_cast<const uint64_t*>(source + at);
    }
  } else if (alignment % 4 == 0) {
    for (uint32_t at = 0; at < size; at += 4) {
      *reinterpret_cast<uint32_t*>(target + at) = *reinterpret_cast<const uint32_t*>(source + at);
    }
  } else {
    for (uint32_t at = 0; at < size; ++at) target[at] = source[at];
  }
}

// A value of up to 8 bytes as a version's payload: its bytes in
// little-endian order, zeros above them (one load where the value is a
// whole aligned word).
__device__ __forceinline__ uint64_t PayloadOf(const uint8_t* value, uint32_t size) {
  const uint64_t address = reinterpret_cast<uint64_t>(value);
  if (size == 8 && address % 8 == 0) return *reinterpret_cast<const uint64_t*>(value);
  if (size == 4 && address % 4 == 0) return *reinterpret_cast<const uint32_t*>(value);
  uint64_t payload = 0;
  for (uint32_t byte = 0; byte < size; ++byte) {
    payload |= static_cast<uint64_t>(value[byte]) << (8 * byte);
  }
  return payload;
}

// Sets `size` bytes at `target` to zero in the widest words that the size
// and the address allow (16, 8, 4 or 1 bytes).
__device__ __forceinline__ void FillZeros(uint8_t* target, uint32_t size) {
  const uint64_t alignment = reinterpret_cast<uint64_t>(target) | size;
  if (alignment % 16 == 0) {
    for (uint32_t at = 0; at < size; at += 16) {
      *reinterpret_cast<uint4*>(target + at) = make_uint4(0, 0, 0, 0);
    }
  } else if (alignment % 8 == 0) {
    for (uint32_t at = 0; at < size; at += 8) *reinterpret_cast<uint64_t*>(target + at) = 0;
  } else if (alignment % 4 == 0) {
    for (uint32_t at = 0; at < size; at += 4) *reinterpret_cast<uint32_t*>(target + at) = 0;
  } else {
    for (uint32_t at = 0; at < size; ++at) target[at] = 0;
  }
}

// Writes a value of up to 8 bytes held as a payload (PayloadOf) to `target`:
// one store where the value is a whole aligned word.
__device__ __forceinline__ void StorePayload(uint8_t* target, uint64_t payload, uint32_t size) {
  const uint64_t address = reinterpret_cast<uint64_t>(target);
  if (size == 8 && address % 8 == 0) {
    *reinterpret_cast<uint64_t*>(target) = payload;
  } else if (size == 4 && address % 4 == 0) {
    *reinterpret_cast<uint32_t*>(target) = static_cast<uint32_t>(payload);
  } else {
    for (uint32_t byte = 0; byte < size; ++byte) {
      target[byte] = static_cast<uint8_t>(payload >> (8 * byte));
    }
  }
}

template <uint32_t kKeyWords>
__device__ __forceinline__ void WriteValue(const Tree<kKeyWords>& tree, uint32_t slot,
                                           const uint8_t* value) {
  if (tree.value_size <= 8) {
    tree.versions[slot].payload = PayloadOf(value, tree.value_size);
  } else {
    CopyBytes(tree.cells + static_cast<uint64_t>(slot) * tree.value_size, value, tree.value_size);
  }
}

// WriteValue with a value of up to 8 bytes given as its payload (PayloadOf
// of `value`, loaded ahead by the caller).
template <uint32_t kKeyWords>
__device__ __forceinline__ void WriteValue(const Tree<kKeyWords>& tree, uint32_t slot,
                                           const uint8_t* value, uint64_t payload) {
  if (tree.value_size <= 8) {
    tree.versions[slot].payload = payload;
  } else {
    CopyBytes(tree.cells + static_cast<uint64_t>(slot) * tree.value_size, value, tree.value_size);
  }
}

template <uint32_t kKeyWords>
__device__ __forceinline__ void CopyVersion(const Tree<kKeyWords>& tree, uint32_t from,
                                            uint32_t to) {
  tree.versions[to] = tree.versions[from];
  if (tree.value_size > 8) {
    const uint8_t* source = tree.cells + static_cast<uint64_t>(from) * tree.value_size;
    uint8_t* cell = tree.cells + static_cast<uint64_t>(to) * tree.value_size;
    for (uint32_t byte = 0; byte < tree.value_size; ++byte) cell[byte] = source[byte];
  }
}

// Writes the value of version `slot` (zeros for kNone) to `out`, one lane
// alone: a value of up to 8 bytes from `payload` (the version's, loaded by
// the caller), a larger one copied from the slot's cell.
template <uint32_t kKeyWords>
__device__ __forceinline__ void StoreValue(const Tree<kKeyWords>& tree, uint32_t slot,
                                           uint64_t payload, uint8_t* out) {
  const uint32_t size = tree.value_size;
  if (size <= 8) {
    StorePayload(out, slot != kNone ? payload : 0, size);
  } else if (slot != kNone) {
    CopyBytes(out, tree.cells + static_cast<uint64_t>(slot) * size, size);
  } else {
    FillZeros(out, size);
  }
}

// The version of the list at `head` a reader at `at` sees, or kNone when it
// sees the key absent.
template <uint32_t kKeyWords>
__device__ __forceinline__ uint32_t LiveAt(const Tree<kKeyWords>& tree, uint32_t head,
                                           uint64_t at) {
  for (uint32_t slot = head; slot != kNone; slot = tree.versions[slot].next) {
    const uint64_t stamp = tree.versions[slot].stamp;
    if (VisibleAt(TimestampOf(stamp), at)) return IsTombstone(stamp) ? kNone : slot;
  }
  return kNone;
}

// LiveAt for one lane alone: each version's stamp, payload and next loaded
// together (one trip per version), through the read-only cache (no writer
// beside a read). The payload of the version found goes to *payload.
template <uint32_t kKeyWords>
__device__ __forceinline__ uint32_t LaneLiveAt(const Tree<kKeyWords>& tree, uint32_t head,
                                               uint64_t at, uint64_t* payload) {
  for (uint32_t slot = head; slot != kNone;) {
    const Version* version = &tree.versions[slot];
    const uint64_t stamp = __ldg(reinterpret_cast<const unsigned long long*>(&version->stamp));
    const uint64_t value = __ldg(reinterpret_cast<const unsigned long long*>(&version->payload));
    const uint32_t next = __ldg(&version->next);
    if (VisibleAt(TimestampOf(stamp), at)) {
      *payload = value;
      return IsTombstone(stamp) ? kNone : slot;
    }
    slot = next;
  }
  return kNone;
}

// The versions a reader at `at` sees of the entries of `node` that `wanted`
// marks (bit i: entry i), one lane alone: slots[i], or kNone where the key is
// absent at `at` or not wanted, and (kPayloads) the payloads of those found.
// The heads of the wanted entries load together, one trip for the node's
// entries; a list is walked further only where its head is newer than `at`
// (a snapshot's read).
template <bool kPayloads, uint32_t kKeyWords>
__device__ __forceinline__ void LiveEntries(const Tree<kKeyWords>& tree,
                                            const LaneNode<kKeyWords>& node, uint32_t wanted,
                                            uint64_t at, uint32_t slots[kFanout],
                                            uint64_t payloads[kFanout]) {
  uint64_t stamps[kFanout];
#pragma unroll
  for (uint32_t entry = 0; entry < kFanout; ++entry) {
    stamps[entry] = 0;
    payloads[entry] = 0;
    if ((wanted >> entry & 1) == 0) continue;
    const Version* version = &tree.versions[node.pointers[entry]];
    stamps[entry] = __ldg(reinterpret_cast<const unsigned long long*>(&version->stamp));
    if (kPayloads) {
      payloads[entry] = __ldg(reinterpret_cast<const unsigned long long*>(&version->payload));
    }
  }
#pragma unroll
  for (uint32_t entry = 0; entry < kFanout; ++entry) {
    slots[entry] = kNone;
    if ((wanted >> entry & 1) == 0) continue;
    if (VisibleAt(TimestampOf(stamps[entry]), at)) {
      if (!IsTombstone(stamps[entry])) slots[entry] = node.pointers[entry];
    } else {
      slots[entry] = LaneLiveAt(tree, node.pointers[entry], at, &payloads[entry]);
    }
  }
}

// Drops the older versions of the list at `head` that no live snapshot sees,
// their slots freed through the write group's `slots` where given.
template <uint32_t kKeyWords>
__device__ __forceinline__ void Trim(const Tree<kKeyWords>& tree, uint32_t head, LiveSnapshots live,
                                     Deltas* deltas, SlotReserve* slots = nullptr) {
  uint64_t newer_timestamp = TimestampOf(tree.versions[head].stamp);
  uint32_t previous = head;
  uint32_t slot = tree.versions[head].next;
  while (slot != kNone) {
    const uint64_t stamp = tree.versions[slot].stamp;
    const uint32_t next = tree.versions[slot].next;
    if (SeenBySnapshot(TimestampOf(stamp), newer_timestamp, live)) {
      previous = slot;
    } else {
      tree.versions[previous].next = next;
      deltas->versions -= 1;
      if (IsTombstone(stamp)) deltas->tombstones -= 1;
      deltas->reclaimed += 1;
      if (slots != nullptr) {
        slots->Free(tree, slot);
      } else {
        FreeSlot(tree, slot);
      }
    }
    newer_timestamp = TimestampOf(stamp);
    slot = next;
  }
}

}  // namespace gpkv::btree::gpu
