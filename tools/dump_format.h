// The header line of `gpkv dump`'s text output, which `gpkv load --file`
// checks before it loads a pair and from which `gpkv load --create` creates
// the table:
//
//   # gpkv-dump format=1 kind=hash durability=persistent key_size=8 value_size=8
//     expected_keys=1048576 levels=2 hash_locations=2 slots=8 top_buckets=0
//
// (one line). It names the dumped table's kind, durability, key and value
// sizes (bytes), expected keys, the version of the dump format, and the
// value of each of its family's options that `gpkv tables create` takes as a
// flag, named after the flag (`--hash-locations` -> hash_locations). To a
// reader that skips '#' lines it is a comment, so a dump loads into an older
// gpkv too; a reader skips fields it does not know. A file without the
// header (an older dump, or lines written by hand) loads as before, each
// number checked against the table's sizes; a header without the option
// fields (an older dump) creates a table of the family's defaults.
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

// The options of a table like the dumped one, from the dump header `line`
// (IsDumpHeader): kind, durability, sizes, expected keys and the family's
// option fields the header has; the others keep TableOptions' defaults.
// InvalidArgument when the line is malformed, names no kind, durability or
// sizes, or a family option field is not a number; Unsupported for a newer
// dump format or a (kind, durability) this build has no family for.
Status OptionsFromDumpHeader(std::string_view line, const std::string& where,
                             TableOptions* options);

}  // namespace gpkv::tools
