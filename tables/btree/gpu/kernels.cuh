// The kernels of the GPU B-link tree (tree.cuh) that change it: the write
// batch (puts or erases, each lane's operation done by its group of lanes), the
// batch's sort, the bulk build and the reclamation. The reads are in
// read_kernels.cuh. backend.cu launches them.
//
// For backend.cu only (CUDA device code).
#pragma once

#include <cstdint>

#include "tables/btree/batch_rule.h"
#include "tables/btree/gpu/tree.cuh"

namespace gpkv::btree::gpu {

// Broadcasts lane `source`'s key to every lane of the group.
template <uint32_t kKeyWords, uint32_t kWidth>
__device__ __forceinline__ Key<kKeyWords> ShuffleKey(const Key<kKeyWords>& key, uint32_t source,
                                                     const Lanes<kWidth>& lanes) {
  Key<kKeyWords> out;
#pragma unroll
  for (uint32_t word = 0; word < kKeyWords; ++word) {
    out.words[word] = lanes.Shuffle(key.words[word], source);
  }
  return out;
}

// ---- writes ----

// The batch's key `i`, loaded once (volatile: the compiler may not load it
// again). Held to few registers, the write kernel would otherwise load a
// plain key again before each compare with a node's keys, and after the
// descents' fences, which empty the L1 cache, each such load is a trip to L2.
template <uint32_t kKeyWords>
__device__ __forceinline__ Key<kKeyWords> BatchKey(const Key<kKeyWords>* keys, uint64_t i) {
  return LoadKey<true>(&keys[i]);
}

// The write kernel's block size (backend.cu launches every kernel with it):
// its write groups' slot reservations are in shared memory.
constexpr uint32_t kWriteBlockThreads = 256;

// kSplitFirst: the key's leaf is full and the key not in it; the operation
// starts again from the root, splitting every full node on its way down.
// kSplitLeaf: it split its leaf, and goes on from there (the key lies in it
// or right of it, where there is room now); kSplitInner: it split an inner
// node, and goes down from the root again, splitting on.
enum class Outcome { kDone, kRestart, kSplitFirst, kSplitLeaf, kSplitInner, kNoNodes };

// `count` consecutive fresh nodes (lane 0), or kNone when the arena is full
// (Counters::out_of_nodes set; the host clamps the count and grows it). One
// atomicAdd, which never fails: many warps split at once. Nodes handed out
// past the arena's end are not there; those of a request that straddles the
// end are left as empty internal nodes, which nothing reaches.
template <uint32_t kKeyWords>
__device__ __forceinline__ uint32_t TakeNodes(const Tree<kKeyWords>& tree, uint32_t count) {
  const unsigned long long first = atomicAdd(&tree.counters->nodes, count);
  if (first + count <= tree.node_capacity) return static_cast<uint32_t>(first);
  for (unsigned long long index = first; index < tree.node_capacity; ++index) {
    tree.nodes[index].meta = 0;
  }
  tree.counters->out_of_nodes = 1;
  return kNone;
}

// Node `to` (fresh) takes the upper half of the full node `from` (its view).
template <uint32_t kKeyWords>
__device__ __forceinline__ void WriteUpperHalf(const Tree<kKeyWords>& tree, uint32_t to,
                                               uint32_t from, const View<kKeyWords>& view,
                                               const NodeLanes& lanes) {
  Node<kKeyWords>* node = &tree.nodes[to];
  const uint32_t lane = lanes.rank;
  if (lane >= kSplitAt && lane < kFanout) {
    StoreKey(&node->keys[lane - kSplitAt], view.key);
    Store(&node->pointers[lane - kSplitAt], view.pointer);
  }
  if (lane == 0) {
    Store(&node->latch, 0u);
    Store(&node->meta, (kFanout - kSplitAt) | (view.meta & (kLeafFlag | kHighFlag)));
    Store(&node->link, view.link);
    Store(&node->left, from);
    StoreKey(&node->high, view.high);
  }
}

// The full node `index` keeps its lower half, below `separator`, with the
// new node `right` beside it.
template <uint32_t kKeyWords>
__device__ __forceinline__ void KeepLowerHalf(const Tree<kKeyWords>& tree, uint32_t index,
                                              const View<kKeyWords>& view,
                                              const Key<kKeyWords>& separator, uint32_t right,
                                              const NodeLanes& lanes) {
  if (lanes.rank != 0) return;
  Node<kKeyWords>* node = &tree.nodes[index];
  Store(&node->meta, kSplitAt | (view.meta & kLeafFlag) | kHighFlag);
  StoreKey(&node->high, separator);
  Store(&node->link, right);
  if (view.link != kNone) Store(&tree.nodes[view.link].left, right);
}

// Splits the full node `index` (read as `view`, its latch `view.latch`),
// whose parent the group read with latch `parent_latch`: kSplitLeaf or
// kSplitInner when it did, kRestart when a latch was lost (the caller starts
// again from the root), kNoNodes when the arena is full (the caller grows it
// first).
template <uint32_t kKeyWords>
__device__ Outcome Split(const Tree<kKeyWords>& tree, uint32_t index, const View<kKeyWords>& view,
                         uint32_t parent, uint32_t parent_latch, const NodeLanes& lanes) {
  const uint32_t lane = lanes.rank;
  if (!TryLatch(tree, index, view.latch, lanes)) return Outcome::kRestart;
  const Key<kKeyWords> separator = ShuffleKey(view.key, kSplitAt, lanes);
  const uint32_t root = LoadRoot(tree, lanes);
  if (index == root) {
    // A new root above the old one and its new sibling.
    uint32_t first = 0;
    if (lane == 0) first = TakeNodes(tree, 2);
    first = lanes.Shuffle(first, 0);
    if (first == kNone) {
      Unlatch(tree, index, view.latch, lanes);
      return Outcome::kNoNodes;
    }
    const uint32_t right = first;
    const uint32_t new_root = first + 1;
    WriteUpperHalf(tree, right, index, view, lanes);
    const Key<kKeyWords> low = ShuffleKey(view.key, 0, lanes);
    if (lane == 0) {
      Node<kKeyWords>* node = &tree.nodes[new_root];
      Store(&node->latch, 0u);
      Store(&node->meta, 2u);
      Store(&node->link, kNone);
      Store(&node->left, kNone);
      StoreKey(&node->high, low);  // unused: no high flag
      StoreKey(&node->keys[0], low);
      Store(&node->pointers[0], index);
      StoreKey(&node->keys[1], separator);
      Store(&node->pointers[1], right);
    }
    WriterFence();
    KeepLowerHalf(tree, index, view, separator, right, lanes);
    WriterFence();
    if (lane == 0) atomicExch(tree.root, new_root);
    Unlatch(tree, index, view.latch, lanes);
    return view.leaf() ? Outcome::kSplitLeaf : Outcome::kSplitInner;
  }
  if (parent == kNone) {  // reached beside the root: the root changed
    Unlatch(tree, index, view.latch, lanes);
    return Outcome::kRestart;
  }
  if (!TryLatch(tree, parent, parent_latch, lanes)) {
    Unlatch(tree, index, view.latch, lanes);
    return Outcome::kRestart;
  }
  View<kKeyWords> up;
  ReadNode<true>(tree, parent, &up, lanes, /*latched=*/true);
  const unsigned at = lanes.Ballot(lane < up.count() && up.pointer == index);
  uint32_t right = kNone;
  if (at != 0 && up.count() < kFanout) {
    if (lane == 0) right = TakeNodes(tree, 1);
    right = lanes.Shuffle(right, 0);
  }
  if (right == kNone) {  // not the parent any more, a full parent, or no node left
    Unlatch(tree, parent, parent_latch, lanes);
    Unlatch(tree, index, view.latch, lanes);
    return at != 0 && up.count() < kFanout ? Outcome::kNoNodes : Outcome::kRestart;
  }
  const uint32_t position = __ffs(at);  // the new entry goes after the node's
  WriteUpperHalf(tree, right, index, view, lanes);
  WriterFence();
  KeepLowerHalf(tree, index, view, separator, right, lanes);
  Node<kKeyWords>* node = &tree.nodes[parent];
  if (lane >= position && lane < up.count()) {
    StoreKey(&node->keys[lane + 1], up.key);
    Store(&node->pointers[lane + 1], up.pointer);
  }
  lanes.Sync();
  if (lane == 0) {
    StoreKey(&node->keys[position], separator);
    Store(&node->pointers[position], right);
    Store(&node->meta, up.meta + 1);
  }
  Unlatch(tree, parent, parent_latch, lanes);
  Unlatch(tree, index, view.latch, lanes);
  return view.leaf() ? Outcome::kSplitLeaf : Outcome::kSplitInner;
}

// Where a write starts: the leaf whose key range held its key as a lane
// read the tree, and the node the lane went down to it from, with that
// node's latch as the lane read it (the parent a split of the leaf needs).
// kNone where there is none: the leaf is the root, or the descent met a
// latched or changing node (the group then goes down from the root).
// `known`: the lane read the leaf itself, checked against its latch; then
// `head` is the key's version list in it, or kNone where it lacked the key.
struct Place {
  uint32_t leaf = kNone;
  uint32_t parent = kNone;
  uint32_t parent_latch = 0;
  uint32_t head = kNone;
  bool known = false;
};

// The Place of `key`, found by this thread alone beside the writers. The
// lanes' descents run side by side (as LeafOf's for the reads), each node
// one trip to memory (ReadLaneNode, past the L1 cache) checked against its
// latch as ReadNode's are: the latch with acquire, the node, a fence, the
// latch again. The check's second load goes out beside the next node's
// first (a node whose check fails ends the descent before its child is
// used), so a level costs two trips. The leaf stays a right place to start
// after later splits: a node's low bound never changes (a split moves the
// upper half of a node to a new right sibling, and nodes never merge), so a
// key the leaf no longer holds lies right of it, where the group's B-link
// walk from it goes. At the leaf the lane also finds its key's entry.
template <uint32_t kKeyWords>
__device__ __forceinline__ Place WriteLeafOf(const Tree<kKeyWords>& tree,
                                             const Key<kKeyWords> key) {
  Place place;
  uint32_t index = LoadAcquire(tree.root);
  uint32_t latch = LoadAcquire(&tree.nodes[index].latch);
  while (true) {
    if ((latch & 1) != 0) return Place{};
    LaneNode<kKeyWords> node;
    ReadLaneNode<true>(tree, index, &node);
    AcquireFence();
    const uint32_t again = Load<true>(&tree.nodes[index].latch);
    const bool past_high = node.PastHigh(key);
    if (!past_high && node.leaf()) {
      if (again != latch) return Place{};
      uint32_t head = kNone;
#pragma unroll
      for (uint32_t entry = 0; entry < kFanout; ++entry) {
        if (entry < node.count() && Equal(node.keys[entry], key)) head = node.pointers[entry];
      }
      place.leaf = index;
      place.head = head;
      place.known = true;
      return place;
    }
    const uint32_t next = past_high ? node.link : node.ChildFor(key);
    // A torn read may name no node: its latch is then not loaded (the check
    // below fails, or the odd value ends the descent).
    const uint32_t next_latch =
        next < tree.node_capacity ? LoadAcquire(&tree.nodes[next].latch) : 1u;
    if (again != latch) return Place{};
    if (!past_high) {
      place.parent = index;
      place.parent_latch = latch;
    }
    index = next;
    latch = next_latch;
  }
}

// A put's change to its key's list at `head`, whose newest version is live
// (`was_live`) or a tombstone: the head replaced in place (kept: kNone), or
// first copied to the fresh slot `kept` behind it, for a snapshot that
// sees it.
template <uint32_t kKeyWords>
__device__ __forceinline__ void PutOnHead(const Tree<kKeyWords>& tree, uint32_t head, bool was_live,
                                          uint32_t kept, const uint8_t* value, uint64_t payload,
                                          uint64_t timestamp, Deltas* deltas) {
  if (kept != kNone) {
    CopyVersion(tree, head, kept);
    tree.versions[head].next = kept;
    deltas->versions += 1;
  } else if (!was_live) {
    deltas->tombstones -= 1;  // the tombstone no snapshot sees is replaced
  }
  WriteValue(tree, head, value, payload);
  tree.versions[head].stamp = Stamp(timestamp, false);
  if (!was_live) deltas->live_keys += 1;
}

// A put on a key the tree holds, its list at `head` (lane 0): the newest
// version replaced in place, or a new one put in front. `payload`: the
// value as WriteValue takes it.
template <uint32_t kKeyWords>
__device__ void PutExisting(const Tree<kKeyWords>& tree, uint32_t head, const uint8_t* value,
                            uint64_t payload, uint64_t timestamp, LiveSnapshots live,
                            Deltas* deltas, SlotReserve* slots) {
  Trim(tree, head, live, deltas, slots);
  const uint64_t stamp = tree.versions[head].stamp;
  const bool was_live = !IsTombstone(stamp);
  const bool in_place = WriteInPlace(TimestampOf(stamp), live);
  PutOnHead(tree, head, was_live, in_place ? kNone : slots->Take(tree), value, payload, timestamp,
            deltas);
}

// One put (value not null; `payload`: the value as WriteValue takes it) or
// erase of `key`, by the whole group. An erase's was_live byte (when not
// null) gets whether the key was live. A put first goes down without
// splitting (most need no split: an update, or a leaf with room);
// `split_full`: it splits every full node on its way (proactive splitting),
// as a put that found its leaf full does on its next try.
// place->leaf: the node the descent begins at, the leaf WriteLeafOf found
// (kNone: the root); a split needs the parent, so split_full begins at the
// root. A split of the key's leaf sets place->leaf to it (kSplitLeaf).
template <uint32_t kKeyWords>
__device__ Outcome TryWrite(const Tree<kKeyWords>& tree, Place* place, const Key<kKeyWords>& key,
                            const uint8_t* value, uint64_t payload, uint64_t timestamp,
                            LiveSnapshots live, uint8_t* was_live, Deltas* deltas,
                            SlotReserve* slots, bool split_full, const NodeLanes& lanes) {
  const uint32_t lane = lanes.rank;
  uint32_t index = place->leaf != kNone && !split_full ? place->leaf : LoadRoot(tree, lanes);
  uint32_t parent = kNone;
  uint32_t parent_latch = 0;
  View<kKeyWords> view;
  while (true) {
    if (!ReadNode<true>(tree, index, &view, lanes)) return Outcome::kRestart;
    if (view.PastHigh(key)) {
      index = view.link;
      continue;
    }
    // A full node on an insert's way is split first (but a leaf that holds
    // the key: its put changes no node). Going down from the leaf the lane
    // found (!split_full), a full leaf splits under the node the lane's
    // descent went down from, where that still holds: Split latches it from
    // the latch value the lane read and checks that it points at the leaf.
    // Else (or once that failed: the parent's latch changes with every split
    // under it) the put goes down from the root, splitting full nodes on its
    // way (kSplitFirst).
    if (value != nullptr && view.count() == kFanout &&
        (split_full || (view.leaf() && place->parent != kNone)) &&
        !(view.leaf() && FindInLeaf(view, key, lanes) != kNone)) {
      if (!split_full) {
        parent = place->parent;
        parent_latch = place->parent_latch;
        place->parent = kNone;
      }
      const Outcome outcome = Split(tree, index, view, parent, parent_latch, lanes);
      if (outcome == Outcome::kSplitLeaf) place->leaf = index;
      return outcome == Outcome::kRestart && !split_full ? Outcome::kSplitFirst : outcome;
    }
    if (view.leaf()) break;
    parent = index;
    parent_latch = view.latch;
    index = ChildFor(view, key, lanes);
  }
  const uint32_t found = FindInLeaf(view, key, lanes);
  Node<kKeyWords>* node = &tree.nodes[index];
  if (value != nullptr) {
    if (found != kNone) {
      // The head stays where the leaf points: no latch needed.
      const uint32_t head = lanes.Shuffle(view.pointer, found);
      if (lane == 0) PutExisting(tree, head, value, payload, timestamp, live, deltas, slots);
      lanes.Sync();
      return Outcome::kDone;
    }
    if (view.count() == kFanout) return Outcome::kSplitFirst;
    if (!TryLatch(tree, index, view.latch, lanes)) return Outcome::kRestart;
    const uint32_t count = view.count();
    const uint32_t position = __popc(lanes.Ballot(lane < count && Less(view.key, key)));
    uint32_t slot = 0;
    if (lane == 0) {
      slot = slots->Take(tree);
      tree.versions[slot].stamp = Stamp(timestamp, false);
      tree.versions[slot].next = kNone;
      WriteValue(tree, slot, value, payload);
      deltas->live_keys += 1;
      deltas->versions += 1;
      deltas->leaf_entries += 1;
    }
    slot = lanes.Shuffle(slot, 0);
    if (lane >= position && lane < count) {
      StoreKey(&node->keys[lane + 1], view.key);
      Store(&node->pointers[lane + 1], view.pointer);
    }
    lanes.Sync();
    if (lane == 0) {
      StoreKey(&node->keys[position], key);
      Store(&node->pointers[position], slot);
      Store(&node->meta, view.meta + 1);
    }
    Unlatch(tree, index, view.latch, lanes);
    return Outcome::kDone;
  }
  // An erase.
  if (found == kNone) {
    if (lane == 0 && was_live != nullptr) *was_live = 0;
    return Outcome::kDone;
  }
  const uint32_t head = lanes.Shuffle(view.pointer, found);
  // What the erase does, decided before any change (but the trim of
  // versions no snapshot sees, which a second try repeats harmlessly).
  bool head_live = false;
  bool in_place = false;
  bool older = false;
  if (lane == 0) {
    Trim(tree, head, live, deltas, slots);
    const uint64_t stamp = tree.versions[head].stamp;
    head_live = !IsTombstone(stamp);
    in_place = WriteInPlace(TimestampOf(stamp), live);
    older = tree.versions[head].next != kNone;
  }
  head_live = lanes.Shuffle(head_live, 0);
  in_place = lanes.Shuffle(in_place, 0);
  older = lanes.Shuffle(older, 0);
  // The key leaves the leaf: a lone tombstone, or a live head no snapshot sees
  // with nothing older.
  const bool remove = !older && (!head_live || in_place);
  if (remove && !TryLatch(tree, index, view.latch, lanes)) return Outcome::kRestart;
  if (lane == 0) {
    if (!head_live) {
      if (remove) {
        deltas->versions -= 1;
        deltas->tombstones -= 1;
        deltas->reclaimed += 1;
        deltas->leaf_entries -= 1;
        slots->Free(tree, head);
      }
    } else if (remove) {
      deltas->versions -= 1;
      deltas->live_keys -= 1;
      deltas->leaf_entries -= 1;
      slots->Free(tree, head);
    } else {
      if (!in_place) {
        const uint32_t kept = slots->Take(tree);
        CopyVersion(tree, head, kept);
        tree.versions[head].next = kept;
        deltas->versions += 1;
      }
      tree.versions[head].stamp = Stamp(timestamp, true);
      tree.versions[head].payload = 0;
      deltas->tombstones += 1;
      deltas->live_keys -= 1;
    }
    if (was_live != nullptr) *was_live = head_live ? 1 : 0;
  }
  if (remove) {
    const uint32_t count = view.count();
    if (lane > found && lane < count) {
      StoreKey(&node->keys[lane - 1], view.key);
      Store(&node->pointers[lane - 1], view.pointer);
    }
    lanes.Sync();
    if (lane == 0) Store(&node->meta, view.meta - 1);
    Unlatch(tree, index, view.latch, lanes);
  }
  lanes.Sync();
  return Outcome::kDone;
}

// A lane's own put done by the lane alone, from what its descent read (a
// known Place), where it changes no node and the key's list holds one
// version: an update, in place or as a new head with the old version kept
// behind it for a snapshot (as PutExisting, on a list of one). Such puts make
// most of a batch of updates, and done this way a warp's 32 lanes work on
// theirs side by side, where a group's lanes work on one write at a time.
// In a batch of puts no key leaves the tree, and a list's head stays where
// its leaf entry points, so the head the lane found is its key's list.
// Every lane of the group calls it (the slots of the puts that keep the old
// version are taken for the group at once); true where this lane's put is
// done, its counter changes in `deltas` (this lane's own). The others, and
// every erase, go to the group (TryWrite): erases done alone were slower.
template <uint32_t kKeyWords>
__device__ bool UpdateAlone(const Tree<kKeyWords>& tree, bool has_work, const Place& place,
                            const uint8_t* value, uint64_t payload, uint64_t timestamp,
                            LiveSnapshots live, Deltas* deltas, const NodeLanes& lanes) {
  if (value == nullptr) return false;  // a batch of erases (every lane's)
  const uint32_t head = place.head;
  bool done = false;
  bool head_live = false;
  bool in_place = false;
  if (has_work && place.known && head != kNone && tree.versions[head].next == kNone) {
    const uint64_t stamp = tree.versions[head].stamp;
    head_live = !IsTombstone(stamp);
    in_place = WriteInPlace(TimestampOf(stamp), live);
    done = true;
  }
  const unsigned takes = lanes.Ballot(done && !in_place);
  unsigned long long first = 0;
  if (lanes.rank == 0 && takes != 0) first = atomicAdd(&tree.counters->taken, __popc(takes));
  first = lanes.Shuffle(first, 0);
  if (!done) return false;
  const uint32_t below = (1u << lanes.rank) - 1;
  const uint32_t kept = in_place ? kNone : SlotAt(tree, first + __popc(takes & below));
  PutOnHead(tree, head, head_live, kept, value, payload, timestamp, deltas);
  return true;
}

// The batch's n operations (keys ascending; values null: erases); done[i]
// is set for each applied. Each group of kFanout lanes (NodeLanes) takes
// kFanout consecutive operations at a time from Counters::handed_out (zero
// at launch) and does them one after another, the group on each; a warp's
// groups go their own ways (their splits and restarts differ), meeting only
// in the group-wide intrinsics. Taken as they go, the operations keep every
// group busy to the end; handed out by a fixed stride instead, a block would
// hold its multiprocessor's place until its slowest group ended, and groups
// whose operations split end long after the others. The launch is as many
// blocks as the multiprocessors hold at once (gpu/resident_blocks.cuh). The
// slab hash's ForEachUnit takes units the same way, each next one ahead;
// written with it (units taken ahead or not), this kernel spilled more under
// its register bound and ran inserts 0.86-0.92x as fast. A group that finds
// no node left for a split stops (Counters::out_of_nodes): the host grows
// the arena and launches again for the operations not done. Its registers
// are held to what three blocks a multiprocessor (one-word keys: 80) or two
// (longer keys: 128) leave: a few more cost a third or half of its warps,
// and the writes their speed.
template <uint32_t kKeyWords>
__global__ void __launch_bounds__(kWriteBlockThreads, kKeyWords == 1 ? 3 : 2)
    WriteKernel(Tree<kKeyWords> tree, const Key<kKeyWords>* keys, const uint8_t* values, uint64_t n,
                uint64_t timestamp, LiveSnapshots live, uint8_t* done, uint8_t* was_live) {
  const NodeLanes lanes;
  const uint32_t lane = lanes.rank;
  Deltas deltas;  // this lane's writes alone, and lane 0's the group's
  __shared__ SlotReserve reserves[kWriteBlockThreads / kFanout];
  SlotReserve* slots = &reserves[threadIdx.x / kFanout];  // lane 0's
  while (true) {
    unsigned long long first = 0;
    if (lane == 0) first = atomicAdd(&tree.counters->handed_out, kFanout);
    first = lanes.Shuffle(first, 0);
    if (first >= n) break;
    const uint64_t mine = first + lane;
    const bool has_work = mine < n && done[mine] == 0;
    // Each lane finds its own operation's leaf beside the others, and does
    // the operation alone where it can (UpdateAlone); the group then starts
    // each other operation there, and again there after a failed latch
    // check (the leaf's low bound never changes).
    const Place lane_place = has_work ? WriteLeafOf(tree, BatchKey(keys, mine)) : Place{};
    // A value of up to 8 bytes is loaded here, by its own lane, so that the
    // group's turn on the operation does not wait for it. (Loaded before the
    // descent, it would be held through it, and with 32-byte keys the kernel
    // would need more registers than two blocks per multiprocessor leave.)
    const bool small_puts = values != nullptr && tree.value_size <= 8;
    const uint64_t lane_payload =
        has_work && small_puts ? PayloadOf(values + mine * tree.value_size, tree.value_size) : 0;
    const bool alone = UpdateAlone(tree, has_work, lane_place,
                                   values == nullptr ? nullptr : values + mine * tree.value_size,
                                   lane_payload, timestamp, live, &deltas, lanes);
    if (alone) done[mine] = 1;
    unsigned pending = lanes.Ballot(has_work && !alone);
    if (lane == 0) slots->Start(__popc(pending));
    bool stopped = false;
    while (pending != 0 && !stopped) {
      const uint32_t source = __ffs(pending) - 1;
      pending &= pending - 1;
      const uint64_t op = first + source;
      Place place;
      place.leaf = lanes.Shuffle(lane_place.leaf, source);
      place.parent = lanes.Shuffle(lane_place.parent, source);
      place.parent_latch = lanes.Shuffle(lane_place.parent_latch, source);
      const Key<kKeyWords> key = BatchKey(keys, op);
      const uint8_t* value = values == nullptr ? nullptr : values + op * tree.value_size;
      const uint64_t payload = lanes.Shuffle(lane_payload, source);
      Outcome outcome;
      bool split_full = false;
      uint32_t backoff = 0;
      while (true) {
        outcome = TryWrite(tree, &place, key, value, payload, timestamp, live,
                           was_live == nullptr ? nullptr : was_live + op, &deltas, slots,
                           split_full, lanes);
        if (outcome == Outcome::kSplitFirst || outcome == Outcome::kSplitLeaf) {
          // Down from the root splitting full nodes, or on from the leaf
          // just split (place.leaf), where there is room now.
          split_full = outcome == Outcome::kSplitFirst;
        } else if (outcome == Outcome::kSplitInner) {
          // Down from the root again, splitting on.
        } else if (outcome == Outcome::kRestart) {
          // Back off a little before the next try, so that the groups that
          // restart do not crowd the latch holder's nodes.
          backoff = backoff == 0 ? 32 : (backoff < 2048 ? backoff * 2 : backoff);
          __nanosleep(backoff);
        } else {
          break;
        }
      }
      if (outcome == Outcome::kNoNodes) {
        stopped = true;
      } else if (lane == 0) {
        done[op] = 1;
        --slots->left;
      }
    }
    if (lane == 0) slots->Release(tree);
    if (stopped) break;
  }
  deltas.SumOver(lanes);
  if (lane == 0) deltas.AddTo(tree.counters);
}

// ---- the batch's sort on the device ----

__global__ void IotaKernel(uint32_t* out, uint64_t n) {
  for (uint64_t i = ThreadIndex(); i < n; i += ThreadCount()) out[i] = static_cast<uint32_t>(i);
}

// out[i] = word `word` of keys[order[i]] (a pass of the radix sort).
template <uint32_t kKeyWords>
__global__ void KeyWordKernel(const Key<kKeyWords>* keys, const uint32_t* order, uint32_t word,
                              uint64_t n, uint64_t* out) {
  for (uint64_t i = ThreadIndex(); i < n; i += ThreadCount()) {
    out[i] = keys[order[i]].words[word];
  }
}

// keep[p] = 1 where position p of the sorted order is the operation of its
// key that counts (batch_rule.h); `puts`: the batch puts, else it erases.
// The key at position p is keys[order[p]], or keys[p] where order is null
// (the sort's own sorted keys, read in order instead of gathered).
template <uint32_t kKeyWords>
__global__ void MarkKernel(const Key<kKeyWords>* keys, const uint32_t* order, uint64_t n, bool puts,
                           uint8_t* keep) {
  const auto at = [&](uint64_t p) -> const Key<kKeyWords>& {
    return keys[order == nullptr ? p : order[p]];
  };
  for (uint64_t p = ThreadIndex(); p < n; p += ThreadCount()) {
    const Key<kKeyWords>& key = at(p);
    const bool same_as_next = p + 1 < n && Equal(at(p + 1), key);
    const bool same_as_previous = p > 0 && Equal(at(p - 1), key);
    keep[p] = OperationCounts(puts, same_as_previous, same_as_next) ? 1 : 0;
  }
}

// The picked operations' keys and values, in the order picked; keys null:
// keys_out holds the picked keys already (the sort picked them), and only
// the values are gathered.
template <uint32_t kKeyWords>
__global__ void GatherKernel(const Key<kKeyWords>* keys, const uint8_t* values,
                             const uint32_t* picked, uint64_t n, uint32_t value_size,
                             Key<kKeyWords>* keys_out, uint8_t* values_out) {
  for (uint64_t i = ThreadIndex(); i < n; i += ThreadCount()) {
    const uint64_t from = picked[i];
    if (keys != nullptr) keys_out[i] = keys[from];
    if (values == nullptr) continue;
    CopyBytes(values_out + i * value_size, values + from * value_size, value_size);
  }
}

// out[picked[i]] = bytes[i]: answers back in the caller's order.
__global__ void ScatterKernel(const uint8_t* bytes, const uint32_t* picked, uint64_t n,
                              uint8_t* out) {
  for (uint64_t i = ThreadIndex(); i < n; i += ThreadCount()) out[picked[i]] = bytes[i];
}

// ---- bulk build (into an empty tree, from the batch's sorted pairs) ----

// Leaves a bulk build writes per tile (BuildLeavesKernel): their images
// take up to 16 KiB of shared memory, their versions about as much. A whole
// number of the first inner level's nodes (kBulkFill leaves each), so that
// a tile builds its leaves' parents too.
template <uint32_t kKeyWords>
constexpr uint32_t kBuildTileLeaves = (16384 / sizeof(Node<kKeyWords>) / kBulkFill) * kBulkFill;

// The header of node `first + position` of a level the bulk build makes
// (nodes first .. first + count - 1, left to right): `entries` entries
// (`flags`: kLeafFlag for a leaf), links to its neighbours on the level, and
// a high key (set by the caller: the next node's first key) but for the
// level's last node.
template <uint32_t kKeyWords>
__device__ __forceinline__ void SetLevelHeader(Node<kKeyWords>* node, uint64_t first,
                                               uint64_t position, uint64_t count, uint32_t entries,
                                               uint32_t flags) {
  const bool last = position + 1 == count;
  node->meta = entries | flags | (last ? 0 : kHighFlag);
  node->link = last ? kNone : static_cast<uint32_t>(first + position + 1);
  node->left = position == 0 ? kNone : static_cast<uint32_t>(first + position - 1);
}

// Leaves 0 .. leaves-1, kBulkFill entries each but the last, and version
// slots 0 .. n-1, straight from the batch's sorted order: entry i (of leaf
// i / kBulkFill) is the operation picked[i] of the caller's values (picked
// null: operation i), and of the caller's keys too unless keys_in_order
// (keys[i]: the sort picked the keys already), its version in slot i.
// A block builds a tile of kBuildTileLeaves leaves at a time: the leaves and
// their versions are made in shared memory, one thread per entry, and then
// copied out whole in 16-byte words. Written straight from each entry's
// thread, a warp's stores of keys, pointers and version fields each touched
// a few bytes of many 32-byte sectors, and the kernel waited on its stores.
// `parents` > 0: the level above the leaves, nodes leaves .. leaves +
// parents - 1 (BuildLevelKernel's layout), is made from the tile's leaf
// images the same way, which spares a pass that reads every leaf again.
template <uint32_t kKeyWords>
__global__ void __launch_bounds__(kWriteBlockThreads)
    BuildLeavesKernel(Tree<kKeyWords> tree, const Key<kKeyWords>* keys, bool keys_in_order,
                      const uint8_t* values, const uint32_t* picked, uint64_t n, uint64_t leaves,
                      uint64_t parents, uint64_t timestamp) {
  constexpr uint32_t kLeaves = kBuildTileLeaves<kKeyWords>;
  constexpr uint32_t kParents = kLeaves / kBulkFill;
  constexpr uint32_t kEntries = kLeaves * kBulkFill;
  constexpr uint32_t kPerThread = (kEntries + kWriteBlockThreads - 1) / kWriteBlockThreads;
  constexpr uint32_t kNodeWords = sizeof(Node<kKeyWords>) / sizeof(uint4);
  static_assert(kEntries * sizeof(Version) % sizeof(uint4) == 0, "whole words of versions");
  __shared__ Node<kKeyWords> nodes[kLeaves];
  __shared__ Node<kKeyWords> parent_nodes[kParents];
  __shared__ uint4 version_words[kEntries * sizeof(Version) / sizeof(uint4)];
  Version* versions = reinterpret_cast<Version*>(version_words);
  const auto key_of = [&](uint64_t i) -> Key<kKeyWords> {
    return keys[keys_in_order || picked == nullptr ? i : picked[i]];
  };
  for (uint64_t tile = blockIdx.x; tile * kEntries < n; tile += gridDim.x) {
    const uint64_t first = tile * kEntries;
    const uint64_t first_leaf = tile * kLeaves;
    const uint32_t entries = static_cast<uint32_t>(n - first < kEntries ? n - first : kEntries);
    const uint32_t tile_leaves = (entries + kBulkFill - 1) / kBulkFill;
    // The tile's parents: parent p's entry c is leaf kBulkFill * p + c.
    const uint32_t tile_parents = parents == 0 ? 0 : (tile_leaves + kBulkFill - 1) / kBulkFill;
    uint4* node_words = reinterpret_cast<uint4*>(nodes);
    uint4* parent_words = reinterpret_cast<uint4*>(parent_nodes);
    for (uint32_t w = threadIdx.x; w < tile_leaves * kNodeWords; w += blockDim.x) {
      node_words[w] = uint4{0, 0, 0, 0};
    }
    for (uint32_t w = threadIdx.x; w < tile_parents * kNodeWords; w += blockDim.x) {
      parent_words[w] = uint4{0, 0, 0, 0};
    }
    // Each thread's entries' inputs are loaded first, all of them at once:
    // the values are read at random through the order, and a thread that
    // had one such read in flight at a time left the kernel waiting on them.
    uint64_t from[kPerThread];
    Key<kKeyWords> key[kPerThread];
    uint64_t payload[kPerThread];
#pragma unroll
    for (uint32_t k = 0; k < kPerThread; ++k) {
      const uint32_t e = threadIdx.x + k * kWriteBlockThreads;
      if (e >= entries) continue;
      const uint64_t i = first + e;
      from[k] = picked == nullptr ? i : picked[i];
      key[k] = keys[keys_in_order ? i : from[k]];
    }
#pragma unroll
    for (uint32_t k = 0; k < kPerThread; ++k) {
      const uint32_t e = threadIdx.x + k * kWriteBlockThreads;
      if (e >= entries || tree.value_size > 8) continue;
      payload[k] = PayloadOf(values + from[k] * tree.value_size, tree.value_size);
    }
    __syncthreads();
#pragma unroll
    for (uint32_t k = 0; k < kPerThread; ++k) {
      const uint32_t e = threadIdx.x + k * kWriteBlockThreads;
      if (e >= entries) continue;
      const uint64_t i = first + e;
      const uint32_t local = e / kBulkFill;
      const uint32_t entry = e - local * kBulkFill;
      Node<kKeyWords>& node = nodes[local];
      node.keys[entry] = key[k];
      node.pointers[entry] = static_cast<uint32_t>(i);
      Version version;
      version.stamp = Stamp(timestamp, false);
      version.next = kNone;
      version.unused = 0;
      if (tree.value_size <= 8) {
        version.payload = payload[k];
      } else {
        version.payload = 0;
        CopyBytes(tree.cells + i * tree.value_size, values + from[k] * tree.value_size,
                  tree.value_size);
      }
      versions[e] = version;
      if (entry != 0) continue;
      const uint64_t leaf = first_leaf + local;
      const bool last = leaf + 1 == leaves;
      SetLevelHeader(&node, 0, leaf, leaves,
                     static_cast<uint32_t>(n - i < kBulkFill ? n - i : kBulkFill), kLeafFlag);
      if (local > 0) nodes[local - 1].high = key[k];
      // The tile's last leaf's high key: the next tile's first key.
      if (local + 1 == tile_leaves && !last) node.high = key_of(i + (entries - e));
    }
    __syncthreads();
    for (uint32_t l = threadIdx.x; l < tile_parents * kBulkFill; l += blockDim.x) {
      const uint32_t p = l / kBulkFill;
      const uint32_t entry = l - p * kBulkFill;
      const uint32_t children =
          tile_leaves - p * kBulkFill < kBulkFill ? tile_leaves - p * kBulkFill : kBulkFill;
      if (entry >= children) continue;
      Node<kKeyWords>& parent = parent_nodes[p];
      parent.keys[entry] = nodes[l].keys[0];
      parent.pointers[entry] = static_cast<uint32_t>(first_leaf + l);
      if (entry + 1 != children) continue;
      // The parent's high key is its last child's.
      const uint64_t index = first_leaf / kBulkFill + p;
      SetLevelHeader(&parent, leaves, index, parents, children, 0);
      if (index + 1 != parents) parent.high = nodes[l].high;
    }
    uint4* leaf_out = reinterpret_cast<uint4*>(tree.nodes + first_leaf);
    for (uint32_t w = threadIdx.x; w < tile_leaves * kNodeWords; w += blockDim.x) {
      leaf_out[w] = node_words[w];
    }
    __syncthreads();
    uint4* parent_out = reinterpret_cast<uint4*>(tree.nodes + leaves + first_leaf / kBulkFill);
    for (uint32_t w = threadIdx.x; w < tile_parents * kNodeWords; w += blockDim.x) {
      parent_out[w] = parent_words[w];
    }
    // Versions first .. first + entries - 1; a tile of an odd count of
    // entries ends in half a word.
    const uint32_t version_bytes = entries * static_cast<uint32_t>(sizeof(Version));
    uint4* version_out = reinterpret_cast<uint4*>(tree.versions + first);
    for (uint32_t w = threadIdx.x; w < version_bytes / sizeof(uint4); w += blockDim.x) {
      version_out[w] = version_words[w];
    }
    if (version_bytes % sizeof(uint4) != 0 && threadIdx.x == 0) {
      const uint32_t w = version_bytes / sizeof(uint4);
      reinterpret_cast<uint2*>(version_out + w)[0] =
          reinterpret_cast<const uint2*>(version_words + w)[0];
    }
    __syncthreads();
  }
}

// The level above nodes [below, below + below_count): nodes [first, first +
// count), each over kBulkFill of them (the last over the rest). One thread
// per entry, as BuildLeavesKernel: entry t points at node below + t and
// takes its first key.
template <uint32_t kKeyWords>
__global__ void BuildLevelKernel(Tree<kKeyWords> tree, uint32_t below, uint64_t below_count,
                                 uint32_t first, uint64_t count) {
  for (uint64_t t = ThreadIndex(); t < below_count; t += ThreadCount()) {
    const uint32_t index = static_cast<uint32_t>(below + t);
    const Key<kKeyWords> key = tree.nodes[index].keys[0];
    const uint64_t j = t / kBulkFill;
    const uint32_t entry = static_cast<uint32_t>(t - j * kBulkFill);
    Node<kKeyWords>& node = tree.nodes[first + j];
    node.keys[entry] = key;
    node.pointers[entry] = index;
    if (entry != 0) continue;
    const uint32_t children =
        static_cast<uint32_t>(below_count - t < kBulkFill ? below_count - t : kBulkFill);
    node.latch = 0;
    SetLevelHeader(&node, first, j, count, children, 0);
    if (j > 0) tree.nodes[first + j - 1].high = key;
  }
}

// ---- reclamation (no reader or writer beside it) ----

// Each leaf, one thread: drops the versions no live snapshot sees, and the
// keys left with only a tombstone.
template <uint32_t kKeyWords>
__global__ void ReclaimKernel(Tree<kKeyWords> tree, uint64_t nodes, LiveSnapshots live) {
  Deltas gathered;
  Deltas* deltas = &gathered;
  for (uint64_t index = ThreadIndex(); index < nodes; index += ThreadCount()) {
    Node<kKeyWords>& node = tree.nodes[index];
    if ((node.meta & kLeafFlag) == 0) continue;
    const uint32_t count = node.meta & kCountMask;
    uint32_t kept = 0;
    for (uint32_t entry = 0; entry < count; ++entry) {
      const uint32_t head = node.pointers[entry];
      Trim(tree, head, live, deltas);
      const Version& version = tree.versions[head];
      if (IsTombstone(version.stamp) && version.next == kNone) {
        deltas->versions -= 1;
        deltas->tombstones -= 1;
        deltas->reclaimed += 1;
        deltas->leaf_entries -= 1;
        FreeSlot(tree, head);
        continue;
      }
      if (kept != entry) {
        node.keys[kept] = node.keys[entry];
        node.pointers[kept] = head;
      }
      ++kept;
    }
    node.meta = (node.meta & ~kCountMask) | kept;
  }
  gathered.AddTo(tree.counters);
}

}  // namespace gpkv::btree::gpu
