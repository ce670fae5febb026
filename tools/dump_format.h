// The header line of `gpkv dump`'s text output, which `gpkv load --file`
// checks before it loads a pair:
//
//   # gpkv-dump format=1 kind=hash durability=persistent key_size=8 value_size=8
//
// It names the dumped table's kind, durability, key and value sizes (bytes)
// and the version of the dump format. To a reader that skips '#' lines it is
// a comment, so a dump loads into an older gpkv too; a file without it (an
// older dump, or lines written by hand) loads as before, each number checked
// against the table's sizes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv::tools {

// The dump format this build writes and reads.
constexpr uint32_t kDumpFormat = 1;

// The header line for a table of `options`, without its newline.
std::string DumpHeaderLine(const TableOptions& options);

// Whether `line` is a dump header ("# gpkv-dump" after leading blanks).
bool IsDumpHeader(std::string_view line);

// Checks the dump header `line` (IsDumpHeader) against a table of
// `key_size`-byte keys and `value_size`-byte values named `table`.
// InvalidArgument when the line is malformed or the sizes differ (the pairs
// would not fit), Unsupported for a newer dump format. `where` ("FILE:LINE: ")
// starts each message.
Status CheckDumpHeader(std::string_view line, const std::string& where, const std::string& table,
                       uint32_t key_size, uint32_t value_size);

}  // namespace gpkv::tools
