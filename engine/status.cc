#include "gpkv/status.h"

namespace gpkv {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kNotFound:
      return "not found";
    case Code::kInvalidArgument:
      return "invalid argument";
    case Code::kCorruption:
      return "corruption";
    case Code::kPoolFull:
      return "pool full";
    case Code::kOutOfDeviceMemory:
      return "out of device memory";
    case Code::kIOError:
      return "I/O error";
    case Code::kUnsupported:
      return "unsupported";
    case Code::kAlreadyExists:
      return "already exists";
    case Code::kBusy:
      return "busy";
    case Code::kNeedsRecovery:
      return "needs recovery";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace gpkv
