// Tells a pool of another format version from a damaged one, for the tool's
// exit codes: the library refuses both (Unsupported for a version it does
// not read, Corruption for a bad header); the tool says which, so that
// `gpkv verify` of a pool a newer gpkv wrote does not call it corrupt.
#pragma once

#include <cstdint>
#include <string>

namespace gpkv::tools {

// The format version of the pool file at `path` when its header is intact
// (the magic, and the checksum of bytes 0..119 as docs/FORMAT.md describes
// it) and names a version this build does not read (newer or older); 0
// otherwise: no such file, not a pool, a damaged header, or the version this
// build reads.
uint32_t ForeignPoolFormat(const std::string& path);

// Why this build cannot read a pool of `format_version` (ForeignPoolFormat):
// "PATH: written by a newer gpkv (format N; this build reads up to M)", or
// for an older format what to do about it.
std::string ForeignPoolFormatText(const std::string& path, uint32_t format_version);

}  // namespace gpkv::tools
