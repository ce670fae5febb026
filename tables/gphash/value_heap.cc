#include "tables/gphash/value_heap.h"

#include "pm/extent_allocator.h"

namespace gpkv::gphash {

ValueHeap::ValueHeap(pm::Pool& pool, gphash::GphashRoot* root, const std::string& table_name)
    : pool_(pool),
      root_(root),
      table_name_(table_name),
      cell_size_(root->cell_size),
      cells_per_chunk_(root->cells_per_chunk),
      chunk_bytes_(root->cells_per_chunk * root->cell_size) {}

void ValueHeap::Load(const std::vector<uint64_t>& chunks, std::vector<uint64_t> used) {
  std::lock_guard<std::mutex> lock(mutex_);
  chunks_ = chunks;
  open_used_ = std::move(used);
  open_cells_ = chunks_.size() * cells_per_chunk_;
  open_cursor_ = 0;
  recycled_.clear();
  fresh_next_ = fresh_end_ = 0;
}

Status ValueHeap::Take(size_t count, std::vector<uint64_t>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (count > 0) {
    if (!recycled_.empty()) {
      out->push_back(recycled_.back());
      recycled_.pop_back();
      --count;
      continue;
    }
    if (open_cursor_ < open_cells_) {
      uint64_t cell = open_cursor_++;
      if (((open_used_[cell / 64] >> (cell % 64)) & 1) == 0) {
        out->push_back(CellOffset(cell));
        --count;
      }
      if (open_cursor_ == open_cells_) {
        open_used_.clear();
        open_used_.shrink_to_fit();
      }
      continue;
    }
    if (fresh_next_ < fresh_end_) {
      out->push_back(fresh_next_);
      fresh_next_ += cell_size_;
      --count;
      continue;
    }
    GPKV_RETURN_IF_ERROR(Grow());
  }
  return Status::OK();
}

void ValueHeap::Give(const uint64_t* cells, size_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  recycled_.insert(recycled_.end(), cells, cells + count);
}

Status ValueHeap::Grow() {
  uint64_t count = chunks_.size();
  if (count >= gphash::kMaxValueChunks) {
    return Status::PoolFull(pool_.path() + ": table '" + table_name_ + "': all " +
                            std::to_string(gphash::kMaxValueChunks) + " value chunks of " +
                            std::to_string(cells_per_chunk_) + " cells are in use");
  }
  auto offset =
      pool_.allocator().Allocate(chunk_bytes_, format::kExtentKindValueChunk, root_->table_id);
  if (!offset.ok()) return offset.status();
  root_->value_chunks[count] = *offset;
  pool_.Persist(&root_->value_chunks[count], sizeof(uint64_t));
  pool_.Publish(&root_->value_chunk_count, count + 1);
  chunks_.push_back(*offset);
  fresh_next_ = *offset;
  fresh_end_ = *offset + cells_per_chunk_ * cell_size_;
  return Status::OK();
}

uint64_t ValueHeap::chunk_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunks_.size();
}

uint64_t ValueHeap::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunks_.size() * chunk_bytes_;
}

}  // namespace gpkv::gphash
