#include "pm/extent_allocator.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <unordered_set>

#include "pm/pool.h"

namespace gpkv::pm {
namespace {

using format::ExtentEntry;

std::string Hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIx64, value);
  return buffer;
}

}  // namespace

Result<std::unique_ptr<ExtentAllocator>> ExtentAllocator::Load(Pool& pool, bool salvage) {
  std::unique_ptr<ExtentAllocator> allocator(new ExtentAllocator(pool));
  const format::PoolHeader& header = pool.header();
  const ExtentEntry* entries = pool.At<ExtentEntry>(header.extent_table_offset);
  for (uint32_t i = 0; i < header.extent_capacity; ++i) {
    const ExtentEntry& entry = entries[i];
    uint64_t entry_offset = header.extent_table_offset + uint64_t{i} * sizeof(ExtentEntry);
    std::string where = "extent table entry " + std::to_string(i);
    if (entry.state == format::kExtentFree) {
      allocator->free_entries_.push_back(i);
      continue;
    }
    Status bad;
    if (entry.state != format::kExtentAllocated) {
      bad = Status::Corruption(pool.Where(where, entry_offset + offsetof(ExtentEntry, state)) +
                               ": state " + Hex(entry.state) + " is not a valid extent state");
    } else if (entry.length == 0 || entry.offset % format::kExtentAlignment != 0 ||
               entry.length % format::kExtentAlignment != 0) {
      bad = Status::Corruption(pool.Where(where, entry_offset) + ": extent " + Hex(entry.offset) +
                               "+" + Hex(entry.length) + " is not aligned to 4 KiB");
    } else {
      bad = pool.CheckRange(entry.offset, entry.length, where);
    }
    if (!bad.ok()) {
      if (!salvage) return bad;
      allocator->bad_entries_.push_back(i);
      allocator->load_problems_.push_back(bad.message());
      continue;
    }
    allocator->allocated_.push_back(i);
    allocator->used_bytes_ += entry.length;
  }
  std::sort(allocator->allocated_.begin(), allocator->allocated_.end(),
            [entries](uint32_t a, uint32_t b) { return entries[a].offset < entries[b].offset; });
  // Overlapping entries: an error, or in a salvage load both sides are set
  // aside (which one is right is for repair to find out from what reachable
  // data uses).
  std::vector<bool> overlapping(allocator->allocated_.size(), false);
  uint64_t furthest_end = 0;
  size_t furthest = 0;
  for (size_t k = 0; k < allocator->allocated_.size(); ++k) {
    const ExtentEntry& current = entries[allocator->allocated_[k]];
    if (k > 0 && current.offset < furthest_end) {
      uint32_t index = allocator->allocated_[k];
      const ExtentEntry& other = entries[allocator->allocated_[furthest]];
      Status overlap = Status::Corruption(
          pool.Where("extent table entry " + std::to_string(index),
                     header.extent_table_offset + uint64_t{index} * sizeof(ExtentEntry)) +
          ": extent " + Hex(current.offset) + " overlaps extent " + Hex(other.offset) + "+" +
          Hex(other.length));
      if (!salvage) return overlap;
      allocator->load_problems_.push_back(overlap.message());
      overlapping[k] = overlapping[furthest] = true;
    }
    if (current.offset + current.length > furthest_end) {
      furthest_end = current.offset + current.length;
      furthest = k;
    }
  }
  std::vector<uint32_t> kept;
  for (size_t k = 0; k < allocator->allocated_.size(); ++k) {
    uint32_t index = allocator->allocated_[k];
    if (!overlapping[k]) {
      kept.push_back(index);
      continue;
    }
    allocator->bad_entries_.push_back(index);
    allocator->used_bytes_ -= entries[index].length;
  }
  allocator->allocated_ = std::move(kept);
  // Hand out low entry indexes first (LIFO from the back).
  std::reverse(allocator->free_entries_.begin(), allocator->free_entries_.end());
  return allocator;
}

Result<uint64_t> ExtentAllocator::Allocate(uint64_t length, format::ExtentKind kind,
                                           uint64_t owner_table_id) {
  return AllocateExtent(length, kind, owner_table_id, /*zero=*/true);
}

Result<uint64_t> ExtentAllocator::AllocateUninitialized(uint64_t length, format::ExtentKind kind,
                                                        uint64_t owner_table_id) {
  return AllocateExtent(length, kind, owner_table_id, /*zero=*/false);
}

Result<uint64_t> ExtentAllocator::AllocateExtent(uint64_t length, format::ExtentKind kind,
                                                 uint64_t owner_table_id, bool zero) {
  if (pool_.read_only()) {
    return Status::InvalidArgument(pool_.path() + ": pool is open read-only");
  }
  if (length == 0) return Status::InvalidArgument(pool_.path() + ": extent of 0 bytes");
  length = format::AlignUp(length, format::kExtentAlignment);
  std::lock_guard<std::mutex> lock(mutex_);
  ExtentEntry* entries = pool_.At<ExtentEntry>(pool_.header().extent_table_offset);
  const uint64_t heap_begin = pool_.header().heap_offset;
  const uint64_t heap_end = pool_.size();

  // First fit over the gaps between allocated extents (ordered by offset).
  uint64_t cursor = heap_begin;
  size_t insert_at = allocated_.size();
  uint64_t found = 0;
  bool have_gap = false;
  uint64_t largest_gap = 0;
  for (size_t k = 0; k <= allocated_.size(); ++k) {
    uint64_t gap_end = k < allocated_.size() ? entries[allocated_[k]].offset : heap_end;
    uint64_t gap = gap_end - cursor;
    largest_gap = std::max(largest_gap, gap);
    if (gap >= length) {
      found = cursor;
      insert_at = k;
      have_gap = true;
      break;
    }
    if (k < allocated_.size())
      cursor = entries[allocated_[k]].offset + entries[allocated_[k]].length;
  }
  if (!have_gap || free_entries_.empty()) {
    std::string why = !have_gap ? "no free extent of " + std::to_string(length) + " bytes"
                                : "extent table full (" +
                                      std::to_string(pool_.header().extent_capacity) + " entries)";
    return Status::PoolFull(pool_.path() + ": pool full: " + why + " (heap " +
                            std::to_string(pool_.heap_size()) + " bytes, " +
                            std::to_string(used_bytes_) + " used, largest free " +
                            std::to_string(largest_gap) + ")");
  }
  uint32_t index = free_entries_.back();
  free_entries_.pop_back();
  ExtentEntry& entry = entries[index];
  entry.offset = found;
  entry.length = length;
  entry.kind = kind;
  entry.owner_table_id = static_cast<uint32_t>(owner_table_id);
  pool_.Persist(&entry, offsetof(ExtentEntry, state));
  if (zero) pool_.ZeroAndPersist(pool_.base() + found, length);
  pool_.Publish(&entry.state, format::kExtentAllocated);
  allocated_.insert(allocated_.begin() + static_cast<std::ptrdiff_t>(insert_at), index);
  used_bytes_ += length;
  return found;
}

Status ExtentAllocator::Free(uint64_t offset) {
  if (pool_.read_only()) {
    return Status::InvalidArgument(pool_.path() + ": pool is open read-only");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ExtentEntry* entries = pool_.At<ExtentEntry>(pool_.header().extent_table_offset);
  auto it = std::lower_bound(
      allocated_.begin(), allocated_.end(), offset,
      [entries](uint32_t index, uint64_t value) { return entries[index].offset < value; });
  if (it == allocated_.end() || entries[*it].offset != offset) {
    return Status::InvalidArgument(pool_.Where("extent", offset) +
                                   ": no allocated extent starts here");
  }
  uint32_t index = *it;
  pool_.Publish(&entries[index].state, format::kExtentFree);
  used_bytes_ -= entries[index].length;
  allocated_.erase(it);
  free_entries_.push_back(index);
  return Status::OK();
}

Result<uint64_t> ExtentAllocator::FreeUnreachable(const std::vector<uint64_t>& reachable) {
  std::unordered_set<uint64_t> live(reachable.begin(), reachable.end());
  uint64_t freed = 0;
  for (const ExtentEntry& entry : AllocatedExtents()) {
    if (live.count(entry.offset) != 0) continue;
    GPKV_RETURN_IF_ERROR(Free(entry.offset));
    ++freed;
  }
  return freed;
}

Status ExtentAllocator::Adopt(uint64_t offset, uint64_t length, format::ExtentKind kind,
                              uint64_t owner_table_id) {
  length = format::AlignUp(length, format::kExtentAlignment);
  if (offset % format::kExtentAlignment != 0) {
    return Status::Corruption(pool_.Where("extent", offset) + ": not 4 KiB aligned");
  }
  GPKV_RETURN_IF_ERROR(pool_.CheckRange(offset, length, "extent"));
  std::lock_guard<std::mutex> lock(mutex_);
  ExtentEntry* entries = pool_.At<ExtentEntry>(pool_.header().extent_table_offset);
  auto it = std::lower_bound(
      allocated_.begin(), allocated_.end(), offset,
      [entries](uint32_t index, uint64_t value) { return entries[index].offset < value; });
  bool overlaps_next = it != allocated_.end() && entries[*it].offset < offset + length;
  bool overlaps_previous =
      it != allocated_.begin() && entries[*(it - 1)].offset + entries[*(it - 1)].length > offset;
  if (overlaps_next || overlaps_previous) {
    return Status::Corruption(pool_.Where("extent", offset) + ": " + std::to_string(length) +
                              " bytes overlap an allocated extent");
  }
  if (free_entries_.empty()) {
    return Status::PoolFull(pool_.path() + ": pool full: extent table full");
  }
  uint32_t index = free_entries_.back();
  free_entries_.pop_back();
  ExtentEntry& entry = entries[index];
  entry.offset = offset;
  entry.length = length;
  entry.kind = kind;
  entry.owner_table_id = static_cast<uint32_t>(owner_table_id);
  pool_.Persist(&entry, offsetof(ExtentEntry, state));
  pool_.Publish(&entry.state, format::kExtentAllocated);
  allocated_.insert(it, index);
  used_bytes_ += length;
  return Status::OK();
}

Status ExtentAllocator::ClearBadEntries() {
  std::lock_guard<std::mutex> lock(mutex_);
  ExtentEntry* entries = pool_.At<ExtentEntry>(pool_.header().extent_table_offset);
  for (uint32_t index : bad_entries_) {
    pool_.Publish(&entries[index].state, format::kExtentFree);
    free_entries_.push_back(index);
  }
  bad_entries_.clear();
  return Status::OK();
}

bool ExtentAllocator::IsAllocated(uint64_t offset, uint64_t length) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const ExtentEntry* entries = pool_.At<ExtentEntry>(pool_.header().extent_table_offset);
  auto it = std::lower_bound(
      allocated_.begin(), allocated_.end(), offset,
      [entries](uint32_t index, uint64_t value) { return entries[index].offset < value; });
  return it != allocated_.end() && entries[*it].offset == offset &&
         entries[*it].length == format::AlignUp(length, format::kExtentAlignment);
}

std::vector<format::ExtentEntry> ExtentAllocator::AllocatedExtents() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const ExtentEntry* entries = pool_.At<ExtentEntry>(pool_.header().extent_table_offset);
  std::vector<ExtentEntry> out;
  out.reserve(allocated_.size());
  for (uint32_t index : allocated_) out.push_back(entries[index]);
  return out;
}

uint64_t ExtentAllocator::used_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_bytes_;
}

uint64_t ExtentAllocator::heap_bytes() const { return pool_.heap_size(); }

}  // namespace gpkv::pm
