#include "tables/exception_status.h"

#include <exception>
#include <new>

namespace gpkv::tables {

Status StatusOfCurrentException(const std::string& where) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return Status::OutOfDeviceMemory(where + ": out of memory (RAM) for the table");
  } catch (const std::exception& error) {
    return Status::IOError(where + ": " + error.what());
  } catch (...) {
    return Status::IOError(where + ": unknown error");
  }
}

}  // namespace gpkv::tables
