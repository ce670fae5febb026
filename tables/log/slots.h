// The two-slot commit of a family's root, written once for every family
// that keeps one: a record larger than the 8-byte commit primitive (the
// ordered table's manifest, the logged hash table's checkpoint) is held
// twice in the root; the next one is written into the slot that is not
// active, persisted, then one 8-byte store of the root's active word
// publishes it. A crash before that store leaves the previous slot active
// and whole; after it, the new one.
//
// Active word (u64, in the family's root):
//   bits 63..1  generation   >= 1 once anything was published; +1 per publish
//   bit 0       index        the active slot, 0 or 1
// A slot (the family's struct, two of them side by side in its root) starts
// with u64 generation (the active word's when it was published) and ends
// with u64 checksum: Checksum64 of every byte before it.
//
// Who may call: the table families (their root writer and reader) and tests.
// Thread safety: PublishSlot is the root's writer's (the family serialises
// it); CheckActiveSlot reads a copy of the root.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "format/checksum.h"
#include "format/hd.h"
#include "gpkv/status.h"
#include "pm/atomic_word.h"
#include "pm/pool.h"
#include "tables/log/layout.h"
#include "tables/root_reader.h"

namespace gpkv::log {

GPKV_HD constexpr uint64_t MakeActiveWord(uint64_t generation, uint32_t index) {
  return (generation << 1) | index;
}
GPKV_HD constexpr uint32_t ActiveIndex(uint64_t word) { return static_cast<uint32_t>(word & 1); }
GPKV_HD constexpr uint64_t ActiveGeneration(uint64_t word) { return word >> 1; }

// Checksum64 of a slot's bytes before its checksum field.
template <typename Slot>
uint64_t SlotChecksum(const Slot& slot) {
  static_assert(offsetof(Slot, generation) == 0 && offsetof(Slot, checksum) + 8 == sizeof(Slot));
  return format::Checksum64(&slot, offsetof(Slot, checksum));
}

// Writes `next` into the slot of `slots` (the root's two, in the pool) that
// *active_word does not name, with the next generation and its checksum
// (both set in *next), persists it, then publishes *active_word.
template <typename Slot>
void PublishSlot(pm::Pool& pool, uint64_t* active_word, Slot* slots, Slot* next) {
  const uint64_t active = pm::LoadAcquire(active_word);
  const uint32_t target = 1 - ActiveIndex(active);
  next->generation = ActiveGeneration(active) + 1;
  next->checksum = SlotChecksum(*next);
  std::memcpy(&slots[target], next, sizeof(Slot));
  pool.Persist(&slots[target], sizeof(Slot));
  pool.Publish(active_word, MakeActiveWord(next->generation, target));
}

// Writes the root of a new table to root_offset: slot 0 of root->*slots
// gets generation 1 and log epoch 1 with its checksum, the root is copied
// and persisted, then log half 0's word (`log_word`: epoch 1, no bytes) and
// the active word (generation 1, slot 0) are published. The words stay zero
// until the root they publish is persisted.
template <typename Root, typename Slot>
void WriteFirstRoot(pm::Pool& pool, uint64_t root_offset, Root* root, Slot (Root::*slots)[2],
                    uint64_t Root::*active_word) {
  Slot& first = (root->*slots)[0];
  first.generation = 1;
  first.log_epoch = 1;
  first.checksum = SlotChecksum(first);
  auto* stored = pool.At<Root>(root_offset);
  std::memcpy(stored, root, sizeof(Root));
  pool.Persist(stored, sizeof(Root));
  pool.Publish(&stored->log_word, MakeWord(1, 0));
  pool.Publish(&(stored->*active_word), MakeActiveWord(1, 0));
}

// The slot of `slots` (a copy of the root's two, at slots_at in the root)
// that `word` (at word_at) names, checked: the word was published, the
// slot's checksum matches and its generation is the word's. Corruption from
// bad(offset in the root, why), naming the slot as `what` ("manifest",
// "checkpoint"); else *active_at is the slot's offset in the root.
template <typename Slot, typename BadFn>
Result<Slot> CheckActiveSlot(uint64_t word, const Slot* slots, uint64_t word_at, uint64_t slots_at,
                             const std::string& what, const BadFn& bad, uint64_t* active_at) {
  const uint32_t index = ActiveIndex(word);
  const uint64_t generation = ActiveGeneration(word);
  if (generation == 0) {
    return bad(word_at, "no " + what + " was ever published (active word 0)");
  }
  const Slot& slot = slots[index];
  const uint64_t at = slots_at + index * sizeof(Slot);
  const uint64_t checksum = SlotChecksum(slot);
  if (checksum != slot.checksum) {
    return bad(at + offsetof(Slot, checksum),
               what + " " + std::to_string(index) + " checksum mismatch (stored " +
                   tables::Hex(slot.checksum) + ", computed " + tables::Hex(checksum) + ")");
  }
  if (slot.generation != generation) {
    return bad(at, what + " generation " + std::to_string(slot.generation) +
                       " is not the active word's " + std::to_string(generation));
  }
  *active_at = at;
  return slot;
}

}  // namespace gpkv::log
