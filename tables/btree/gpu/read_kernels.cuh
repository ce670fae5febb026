// The read kernels of the GPU B-link tree (tree.cuh): Get, Count, Range,
// Successor, Predecessor and Scan, each lane's query done by the lane alone
// (a long range and the scan by the whole warp). They run while no write
// does (the core's lock). backend.cu launches them.
//
// For backend.cu only (CUDA device code).
#pragma once

#include <cstdint>

#include "tables/btree/gpu/tree.cuh"

namespace gpkv::btree::gpu {

template <uint32_t kKeyWords>
__device__ __forceinline__ uint32_t DescendTo(const Tree<kKeyWords>& tree,
                                              const Key<kKeyWords>& key, View<kKeyWords>* view) {
  uint32_t index = *tree.root;
  while (true) {
    ReadNode<false>(tree, index, view, Warp());
    if (view->PastHigh(key)) {
      index = view->link;
    } else if (view->leaf()) {
      return index;
    } else {
      index = ChildFor(*view, key, Warp());
    }
  }
}

template <uint32_t kKeyWords>
__device__ __forceinline__ uint32_t DescendLeftmost(const Tree<kKeyWords>& tree,
                                                    View<kKeyWords>* view) {
  uint32_t index = *tree.root;
  while (true) {
    ReadNode<false>(tree, index, view, Warp());
    if (view->leaf()) return index;
    index = __shfl_sync(warp::kFullMask, view->pointer, 0);
  }
}

// The leaf whose key range holds `key`, found by this thread alone and read
// into `node`: the lanes' descents run side by side, so a warp has 32 trips
// to memory in flight per level where a warp-wide descent has one, and each
// node is one trip (ReadLaneNode). Reads run while no writer does, so no
// latch is read. A key at or past a node's high key goes right, at every
// level and at the leaf, so the leaf returned holds the key's range.
template <uint32_t kKeyWords>
__device__ __forceinline__ uint32_t LeafOf(const Tree<kKeyWords>& tree, const Key<kKeyWords>& key,
                                           LaneNode<kKeyWords>* node) {
  uint32_t index = *tree.root;
  while (true) {
    ReadLaneNode(tree, index, node);
    if (node->PastHigh(key)) {
      index = node->link;
    } else if (node->leaf()) {
      return index;
    } else {
      index = node->ChildFor(key);
    }
  }
}

// Reads leaf `index`, found by LeafOf for `key`, into `view` (all lanes),
// following right links while `key` lies past a leaf's high key.
template <uint32_t kKeyWords>
__device__ __forceinline__ void ReadLeaf(const Tree<kKeyWords>& tree, uint32_t index,
                                         const Key<kKeyWords>& key, View<kKeyWords>* view) {
  while (true) {
    ReadNode<false>(tree, index, view, Warp());
    if (!view->PastHigh(key)) return;
    index = view->link;
  }
}

// The entries of `node` whose keys lie in [low, high] (bit i: entry i).
template <uint32_t kKeyWords>
__device__ __forceinline__ uint32_t EntriesWithin(const LaneNode<kKeyWords>& node,
                                                  const Key<kKeyWords>& low,
                                                  const Key<kKeyWords>& high) {
  uint32_t within = 0;
#pragma unroll
  for (uint32_t entry = 0; entry < kFanout; ++entry) {
    if (entry < node.count() && !Less(node.keys[entry], low) && !Less(high, node.keys[entry])) {
      within |= 1u << entry;
    }
  }
  return within;
}

// Whether a key of `node` lies beyond `bound`: above it (a walk right to
// `bound` ends at this node), or (below) below it (a walk left ends here).
template <uint32_t kKeyWords>
__device__ __forceinline__ bool HasKeyBeyond(const LaneNode<kKeyWords>& node,
                                             const Key<kKeyWords>& bound, bool below) {
  bool beyond = false;
#pragma unroll
  for (uint32_t entry = 0; entry < kFanout; ++entry) {
    const Key<kKeyWords>& key = node.keys[entry];
    if (entry < node.count() && (below ? Less(key, bound) : Less(bound, key))) beyond = true;
  }
  return beyond;
}

// Reads run one query per lane: each lane's query is independent and takes
// no latch, so after its descent (LeafOf) the lane finishes it alone, from
// the leaf it holds in its registers. A warp working its lanes' queries one
// after another would add each query's dependent trips to memory (the leaf,
// then its versions) to the warp's wait; alone, the 32 lanes' trips overlap.
// Writes keep the warp-wide scheme for their latches: a warp holds latches
// for one operation at a time, so the lanes of a warp never contend for a
// latch among themselves, and a split moves a node's entries one per lane.

// Each get: the key's entry in its leaf, the version the reader sees (one
// trip; the lists' older versions only for a snapshot older than the head),
// its value out in whole words where the size allows, and the found byte.
// `order` (or null): the keys are the batch's sorted, and the answer of
// position p goes to operation order[p].
template <uint32_t kKeyWords>
__global__ void GetKernel(Tree<kKeyWords> tree, const Key<kKeyWords>* keys, uint64_t n, uint64_t at,
                          uint8_t* values, uint8_t* found, const uint32_t* order = nullptr) {
  for (uint64_t position = ThreadIndex(); position < n; position += ThreadCount()) {
    const Key<kKeyWords> key = keys[position];
    const uint64_t op = order != nullptr ? order[position] : position;
    LaneNode<kKeyWords> leaf;
    LeafOf(tree, key, &leaf);
    uint32_t head = kNone;
#pragma unroll
    for (uint32_t entry = 0; entry < kFanout; ++entry) {
      if (entry < leaf.count() && Equal(leaf.keys[entry], key)) head = leaf.pointers[entry];
    }
    uint64_t payload = 0;
    const uint32_t slot = head != kNone ? LaneLiveAt(tree, head, at, &payload) : kNone;
    StoreValue(tree, slot, payload, values + op * tree.value_size);
    found[op] = slot != kNone ? 1 : 0;
  }
}

// The live keys of [lo, hi] at `at`, up to `limit`, of each query: its lane
// walks the leaves right from lo's, a leaf's version heads loaded together.
// `order` (or null): position p of the launch is query order[p] (the
// queries sorted by their lo bounds' leading bits).
template <uint32_t kKeyWords>
__global__ void CountKernel(Tree<kKeyWords> tree, const Key<kKeyWords>* lo,
                            const Key<kKeyWords>* hi, uint64_t n, uint64_t at, uint64_t limit,
                            uint64_t* counts, const uint32_t* order) {
  for (uint64_t position = ThreadIndex(); position < n; position += ThreadCount()) {
    const uint64_t op = order != nullptr ? order[position] : position;
    const Key<kKeyWords> low = lo[op];
    const Key<kKeyWords> high = hi[op];
    uint64_t count = 0;
    if (!Less(high, low)) {
      LaneNode<kKeyWords> node;
      LeafOf(tree, low, &node);
      while (true) {
        uint32_t slots[kFanout];
        uint64_t payloads[kFanout];
        LiveEntries<false>(tree, node, EntriesWithin(node, low, high), at, slots, payloads);
#pragma unroll
        for (uint32_t entry = 0; entry < kFanout; ++entry) count += slots[entry] != kNone ? 1 : 0;
        if (count >= limit || HasKeyBeyond(node, high, false) || node.link == kNone) break;
        ReadLaneNode(tree, node.link, &node);
      }
    }
    counts[op] = count < limit ? count : limit;
  }
}

// Writes pair `position` (a key and the value of version `slot`, whose
// payload is `payload`) from this lane.
template <uint32_t kKeyWords>
__device__ __forceinline__ void WritePair(const Tree<kKeyWords>& tree, uint64_t position,
                                          const Key<kKeyWords>& key, uint32_t slot,
                                          uint64_t payload, Key<kKeyWords>* keys, uint8_t* values) {
  keys[position] = key;
  StoreValue(tree, slot, payload, values + position * tree.value_size);
}

// WritePair, the payload loaded here.
template <uint32_t kKeyWords>
__device__ __forceinline__ void WritePair(const Tree<kKeyWords>& tree, uint64_t position,
                                          const Key<kKeyWords>& key, uint32_t slot,
                                          Key<kKeyWords>* keys, uint8_t* values) {
  const uint64_t payload = tree.value_size <= 8 ? tree.versions[slot].payload : 0;
  WritePair(tree, position, key, slot, payload, keys, values);
}

// A range's pairs, up to this many, are written by its own lane; a longer
// range's by the whole warp (WarpRange), whose stores of a leaf's pairs go
// out coalesced, where a lane alone stores one pair at a time into its own
// part of the output.
constexpr uint64_t kLaneRangePairs = 64;

// Fills the pairs [begin, end) of the range [low, high] from `node`, the
// leaf LeafOf found for its start bound, this lane alone: the smallest keys
// walking right, or (largest) the largest walking left, as WarpRange.
template <uint32_t kKeyWords>
__device__ __forceinline__ void LaneRange(const Tree<kKeyWords>& tree, LaneNode<kKeyWords> node,
                                          const Key<kKeyWords>& low, const Key<kKeyWords>& high,
                                          uint64_t at, bool largest, uint64_t begin, uint64_t end,
                                          Key<kKeyWords>* keys, uint8_t* values) {
  uint64_t out = largest ? end : begin;
  while (true) {
    uint32_t slots[kFanout];
    uint64_t payloads[kFanout];
    LiveEntries<true>(tree, node, EntriesWithin(node, low, high), at, slots, payloads);
    if (largest) {
#pragma unroll
      for (uint32_t rank = 0; rank < kFanout; ++rank) {
        const uint32_t entry = kFanout - 1 - rank;
        if (slots[entry] != kNone && out > begin) {
          --out;
          WritePair(tree, out, node.keys[entry], slots[entry], payloads[entry], keys, values);
        }
      }
      if (out == begin || HasKeyBeyond(node, low, true) || node.left == kNone) break;
      ReadLaneNode(tree, node.left, &node);
    } else {
#pragma unroll
      for (uint32_t entry = 0; entry < kFanout; ++entry) {
        if (slots[entry] != kNone && out < end) {
          WritePair(tree, out, node.keys[entry], slots[entry], payloads[entry], keys, values);
          ++out;
        }
      }
      if (out >= end || HasKeyBeyond(node, high, false) || node.link == kNone) break;
      ReadLaneNode(tree, node.link, &node);
    }
  }
}

// Fills query `op`'s pairs from leaf `leaf` (LeafOf of its start bound), the
// whole warp on it: the leaf's entries one per lane, each live one written
// at its rank among the leaf's live entries.
template <uint32_t kKeyWords>
__device__ __forceinline__ void WarpRange(const Tree<kKeyWords>& tree, uint64_t op, uint32_t leaf,
                                          const Key<kKeyWords>* lo, const Key<kKeyWords>* hi,
                                          uint64_t at, bool largest, const uint64_t* offsets,
                                          Key<kKeyWords>* keys, uint8_t* values) {
  const uint32_t lane = warp::LaneId();
  const unsigned below_me = (1u << lane) - 1;
  const unsigned above_me = ~((2u << lane) - 1);
  const uint64_t begin = offsets[op];
  const uint64_t end = offsets[op + 1];
  const Key<kKeyWords> low = lo[op];
  const Key<kKeyWords> high = hi[op];
  // The bound the walk starts from, as a value: a reference chosen between
  // the two would keep both bounds in local memory.
  const Key<kKeyWords> start = largest ? hi[op] : lo[op];
  View<kKeyWords> view;
  ReadLeaf(tree, leaf, start, &view);
  uint64_t out = largest ? end : begin;
  while (true) {
    const bool here = lane < view.count();
    const bool inside = here && !Less(view.key, low) && !Less(high, view.key);
    const uint32_t slot = inside ? LiveAt(tree, view.pointer, at) : kNone;
    const unsigned live = __ballot_sync(warp::kFullMask, slot != kNone);
    if (largest) {
      if (slot != kNone) {
        const uint64_t before = __popc(live & above_me) + 1;
        if (out >= begin + before) WritePair(tree, out - before, view.key, slot, keys, values);
      }
      const uint64_t taken = __popc(live);
      out = out > begin + taken ? out - taken : begin;
      const bool past = __ballot_sync(warp::kFullMask, here && Less(view.key, low)) != 0;
      if (out == begin || past || view.left == kNone) break;
      ReadNode<false>(tree, view.left, &view, Warp());
    } else {
      if (slot != kNone) {
        const uint64_t position = out + __popc(live & below_me);
        if (position < end) WritePair(tree, position, view.key, slot, keys, values);
      }
      out += __popc(live);
      const bool past = __ballot_sync(warp::kFullMask, here && Less(high, view.key)) != 0;
      if (out >= end || past || view.link == kNone) break;
      ReadNode<false>(tree, view.link, &view, Warp());
    }
  }
}

// Fills each query's pairs [offsets[i], offsets[i + 1]): the smallest keys
// of [lo, hi] walking right from lo, or the largest walking left from hi.
// Each lane descends to its query's leaf; it fills a range of up to
// kLaneRangePairs pairs itself, and the warp then fills the longer ones of
// its lanes one after another. `order` (or null): position p of the launch
// is query order[p], as CountKernel's.
template <uint32_t kKeyWords>
__global__ void RangeKernel(Tree<kKeyWords> tree, const Key<kKeyWords>* lo,
                            const Key<kKeyWords>* hi, uint64_t n, uint64_t at, bool largest,
                            const uint64_t* offsets, Key<kKeyWords>* keys, uint8_t* values,
                            const uint32_t* order) {
  const uint32_t lane = warp::LaneId();
  for (uint64_t first = ThreadIndex() - lane; first < n; first += ThreadCount()) {
    const uint64_t position = first + lane;
    const uint64_t op = position < n && order != nullptr ? order[position] : position;
    uint32_t leaf = kNone;
    bool warp_range = false;
    if (position < n) {
      const uint64_t begin = offsets[op];
      const uint64_t end = offsets[op + 1];
      if (begin != end) {
        LaneNode<kKeyWords> node;
        leaf = LeafOf(tree, largest ? hi[op] : lo[op], &node);
        warp_range = end - begin > kLaneRangePairs;
        if (!warp_range)
          LaneRange(tree, node, lo[op], hi[op], at, largest, begin, end, keys, values);
      }
    }
    warp::ShareWork(warp::kFullMask, warp_range, [&](int source) {
      WarpRange(tree, __shfl_sync(warp::kFullMask, op, source),
                __shfl_sync(warp::kFullMask, leaf, source), lo, hi, at, largest, offsets, keys,
                values);
    });
  }
}

// Successor (the smallest live key >= key) or predecessor (the largest
// live key <= key) of each key: the key, its value and a found byte. Each
// lane walks from its key's leaf, right or left, to the first leaf with a
// live key on the key's side, a leaf's version heads loaded together.
template <uint32_t kKeyWords>
__global__ void NeighbourKernel(Tree<kKeyWords> tree, const Key<kKeyWords>* keys, uint64_t n,
                                uint64_t at, bool successor, Key<kKeyWords>* neighbours,
                                uint8_t* values, uint8_t* found) {
  for (uint64_t op = ThreadIndex(); op < n; op += ThreadCount()) {
    const Key<kKeyWords> key = keys[op];
    LaneNode<kKeyWords> node;
    LeafOf(tree, key, &node);
    uint32_t slot = kNone;
    uint64_t payload = 0;
    Key<kKeyWords> neighbour = {};
    while (true) {
      uint32_t side = 0;
#pragma unroll
      for (uint32_t entry = 0; entry < kFanout; ++entry) {
        const Key<kKeyWords>& candidate = node.keys[entry];
        const bool on_side = successor ? !Less(candidate, key) : !Less(key, candidate);
        if (entry < node.count() && on_side) side |= 1u << entry;
      }
      uint32_t slots[kFanout];
      uint64_t payloads[kFanout];
      LiveEntries<true>(tree, node, side, at, slots, payloads);
      // The nearest live entry: the first (successor) or the last.
#pragma unroll
      for (uint32_t entry = 0; entry < kFanout; ++entry) {
        if (slots[entry] != kNone && (!successor || slot == kNone)) {
          slot = slots[entry];
          payload = payloads[entry];
          neighbour = node.keys[entry];
        }
      }
      if (slot != kNone) break;
      const uint32_t next = successor ? node.link : node.left;
      if (next == kNone) break;
      ReadLaneNode(tree, next, &node);
    }
    neighbours[op] = neighbour;
    found[op] = slot != kNone ? 1 : 0;
    StoreValue(tree, slot, payload, values + op * tree.value_size);
  }
}

// One warp: up to `limit` live pairs in ascending order from the first key
// after *after (null: from the smallest), their number in *pairs.
template <uint32_t kKeyWords>
__global__ void ScanKernel(Tree<kKeyWords> tree, const Key<kKeyWords>* after, uint64_t limit,
                           uint64_t at, Key<kKeyWords>* keys, uint8_t* values, uint64_t* pairs) {
  const uint32_t lane = warp::LaneId();
  const unsigned below_me = (1u << lane) - 1;
  Key<kKeyWords> start = {};
  View<kKeyWords> view;
  if (after != nullptr) {
    start = *after;
    DescendTo(tree, start, &view);
  } else {
    DescendLeftmost(tree, &view);
  }
  uint64_t out = 0;
  while (out < limit) {
    const bool here = lane < view.count();
    const bool wanted = here && (after == nullptr || Less(start, view.key));
    const uint32_t slot = wanted ? LiveAt(tree, view.pointer, at) : kNone;
    const unsigned live = __ballot_sync(warp::kFullMask, slot != kNone);
    if (slot != kNone) {
      const uint64_t position = out + __popc(live & below_me);
      if (position < limit) WritePair(tree, position, view.key, slot, keys, values);
    }
    out += __popc(live);
    if (view.link == kNone) break;
    ReadNode<false>(tree, view.link, &view, Warp());
  }
  if (lane == 0) *pairs = out < limit ? out : limit;
}

}  // namespace gpkv::btree::gpu
