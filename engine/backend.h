// Which backend runs a DB's batches (Options::backend).
#pragma once

#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv::engine {

// The backend a DB runs on, with its tables on CUDA device `cuda_device`
// (Options::cuda_device). kCpu -> kCpu. kAuto -> kCuda when the library was
// built with the CUDA backend and that device is usable, else kCpu. kCuda ->
// kCuda, or Unsupported saying why it cannot run on that device. Whatever
// the backend: InvalidArgument naming the ordinal when it is negative or
// past the devices this machine has (a machine with none runs kAuto on the
// CPU).
Result<Backend> ChooseBackend(Backend requested, int cuda_device);

// The fallback to the CPU backend, the one rule for every family: a table
// whose family could not open it on the GPU (`gpu_open`: Unsupported or
// OutOfDeviceMemory) is opened on the CPU backend instead when the DB asked
// for Backend::kAuto (`requested`); a table of a read-only pool that needs
// open-time recovery (`gpu_open`: NeedsRecovery) is, whatever the DB asked
// for: the CPU backend answers from the state recovery would produce without
// writing. Any other error, or a DB that asked for kCuda, gets the error.
bool FallsBackToCpu(Backend requested, const Status& gpu_open);

// The one message that says a table runs on the CPU backend although the DB
// runs on CUDA, and why: "<where>: runs on the CPU backend: the GPU cannot
// take it (<the GPU's error>)", or for NeedsRecovery "<where>: runs on the
// CPU backend: a read-only open of a table that needs recovery".
std::string FallbackMessage(const std::string& where, const Status& gpu_open);
const char* BackendName(Backend backend);

}  // namespace gpkv::engine
