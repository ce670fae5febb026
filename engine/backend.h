// Which backend runs a DB's batches (Options::backend).
#pragma once

#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv::engine {

// kCpu -> kCpu. kAuto -> kCuda when the library was built with the CUDA
// backend and a device is usable, else kCpu. kCuda -> kCuda, or Unsupported
// saying why it cannot run here.
Result<Backend> ChooseBackend(Backend requested);
const char* BackendName(Backend backend);

}  // namespace gpkv::engine
