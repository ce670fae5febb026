// gpkv::Status and gpkv::Result<T>: the error values every fallible gpkv call
// returns. No exception crosses the gpkv API and the library never exits the
// process; an error is a value the caller must look at ([[nodiscard]]).
//
// A message names what failed and where, e.g.
//   corruption: pool.gpkv table 'users' bucket 1834 (offset 0x3a000):
//   fingerprint state 7 is not a valid state
//
// Checked builds (NDEBUG not defined, or GPKV_CHECKED defined) abort with
// the status on stderr when a Result without a value is read: the caller
// skipped ok(), and going on would read an empty std::optional (undefined
// behaviour that usually shows up far away). Release builds do not check.
// The check is compiled into the caller's code: where the caller and
// libgpkv were built differently, a Result type both use may get either
// copy (the linker keeps one).
//
// Thread safety: Status and Result are values; distinct objects may be used
// from distinct threads freely.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#if !defined(NDEBUG) || defined(GPKV_CHECKED)
#define GPKV_INTERNAL_CHECK_RESULTS 1
#include <cstdio>
#include <cstdlib>
#else
#define GPKV_INTERNAL_CHECK_RESULTS 0
#endif

namespace gpkv {

enum class Code : uint8_t {
  kOk = 0,
  kNotFound,
  kInvalidArgument,
  kCorruption,
  kPoolFull,
  kOutOfDeviceMemory,
  kIOError,
  kUnsupported,
  kAlreadyExists,
  // Another process, or another open in this process, holds the pool file's
  // lock in a way this open cannot share: one writer, or any number of
  // readers, at a time.
  kBusy,
  // A read-only open met a table that a crash left needing open-time
  // recovery, which would have to write: open the pool writable once.
  kNeedsRecovery,
};

// Name of a code as printed in messages ("corruption", "pool full", ...).
const char* CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status InvalidArgument(std::string m) {
    return Status(Code::kInvalidArgument, std::move(m));
  }
  static Status Corruption(std::string m) { return Status(Code::kCorruption, std::move(m)); }
  static Status PoolFull(std::string m) { return Status(Code::kPoolFull, std::move(m)); }
  static Status OutOfDeviceMemory(std::string m) {
    return Status(Code::kOutOfDeviceMemory, std::move(m));
  }
  static Status IOError(std::string m) { return Status(Code::kIOError, std::move(m)); }
  static Status Unsupported(std::string m) { return Status(Code::kUnsupported, std::move(m)); }
  static Status AlreadyExists(std::string m) { return Status(Code::kAlreadyExists, std::move(m)); }
  static Status Busy(std::string m) { return Status(Code::kBusy, std::move(m)); }
  static Status NeedsRecovery(std::string m) { return Status(Code::kNeedsRecovery, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsPoolFull() const { return code_ == Code::kPoolFull; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsUnsupported() const { return code_ == Code::kUnsupported; }
  bool IsAlreadyExists() const { return code_ == Code::kAlreadyExists; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsNeedsRecovery() const { return code_ == Code::kNeedsRecovery; }

  // "ok" or "<code name>: <message>".
  std::string ToString() const;

  // Swallowing an error is an explicit, searchable act.
  void IgnoreError() const {}

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

namespace detail {

#if GPKV_INTERNAL_CHECK_RESULTS
[[noreturn]] inline void DieOnMissingValue(const Status& status) {
  std::fprintf(stderr, "gpkv: a Result's value was read, but it holds none (%s)\n",
               status.ToString().c_str());
  std::abort();
}
#endif

}  // namespace detail

// A value or the Status that explains why there is none.
// REQUIRES: value() / operator* / operator-> only when ok() (checked builds
// abort otherwise, see above).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *CheckedValue(); }
  const T& value() const& { return *CheckedValue(); }
  T&& value() && { return std::move(*CheckedValue()); }
  T& operator*() & { return *CheckedValue(); }
  const T& operator*() const& { return *CheckedValue(); }
  T* operator->() { return &*CheckedValue(); }
  const T* operator->() const { return &*CheckedValue(); }

 private:
  std::optional<T>& CheckedValue() {
    CheckHasValue();
    return value_;
  }
  const std::optional<T>& CheckedValue() const {
    CheckHasValue();
    return value_;
  }
  void CheckHasValue() const {
#if GPKV_INTERNAL_CHECK_RESULTS
    if (!value_.has_value()) detail::DieOnMissingValue(status_);
#endif
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace gpkv

// Returns early from the enclosing function when `expr` is not OK.
#define GPKV_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::gpkv::Status gpkv_status_ = (expr);        \
    if (!gpkv_status_.ok()) return gpkv_status_; \
  } while (0)
