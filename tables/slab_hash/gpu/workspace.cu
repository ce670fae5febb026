#include <utility>

#include "tables/slab_hash/gpu/workspace.h"

namespace gpkv::slab_hash::gpu {

Result<std::unique_ptr<Workspace>> Workspace::Create() {
  std::unique_ptr<Workspace> workspace(new Workspace());
  GPKV_RETURN_IF_ERROR(workspace->Init(/*stream=*/nullptr, sizeof(BatchCounters)));
  return std::move(workspace);
}

}  // namespace gpkv::slab_hash::gpu
