#include "engine/backend.h"

#if GPKV_HAVE_CUDA
#include "gpu/device_memory.h"
#endif

namespace gpkv::engine {

Result<Backend> ChooseBackend(Backend requested, int cuda_device) {
  const std::string device_name = "Options::cuda_device " + std::to_string(cuda_device);
  if (cuda_device < 0) {
    return Status::InvalidArgument(device_name + ": a CUDA device ordinal is 0 or more");
  }
#if GPKV_HAVE_CUDA
  const int devices = gpu::DeviceCount();
  if (devices > 0 && cuda_device >= devices) {
    return Status::InvalidArgument(device_name + ": this machine has " + std::to_string(devices) +
                                   " CUDA device" + (devices == 1 ? "" : "s") + " (0 to " +
                                   std::to_string(devices - 1) + ")");
  }
#endif
  switch (requested) {
    case Backend::kCpu:
      return Backend::kCpu;
    case Backend::kAuto:
#if GPKV_HAVE_CUDA
      if (gpu::DeviceUsable(cuda_device).ok()) return Backend::kCuda;
#endif
      return Backend::kCpu;
    case Backend::kCuda:
#if GPKV_HAVE_CUDA
    {
      Status usable = gpu::DeviceUsable(cuda_device);
      if (!usable.ok()) return Status(usable.code(), device_name + ": " + usable.message());
      return Backend::kCuda;
    }
#else
      return Status::Unsupported(
          "this build of gpkv has no CUDA backend (nvcc was not found when it was built); "
          "use the CPU backend");
#endif
  }
  return Status::InvalidArgument("unknown backend " + std::to_string(static_cast<int>(requested)));
}

bool FallsBackToCpu(Backend requested, const Status& gpu_open) {
  if (gpu_open.IsNeedsRecovery()) return true;
  const bool gpu_cannot_take_it =
      gpu_open.IsUnsupported() || gpu_open.code() == Code::kOutOfDeviceMemory;
  return requested == Backend::kAuto && gpu_cannot_take_it;
}

std::string FallbackMessage(const std::string& where, const Status& gpu_open) {
  if (gpu_open.IsNeedsRecovery()) {
    return where + ": runs on the CPU backend: a read-only open of a table that needs recovery";
  }
  return where + ": runs on the CPU backend: the GPU cannot take it (" + gpu_open.ToString() + ")";
}

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kCpu:
      return "cpu";
    case Backend::kCuda:
      return "cuda";
    case Backend::kAuto:
      return "auto";
  }
  return "unknown";
}

}  // namespace gpkv::engine
