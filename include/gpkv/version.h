// The gpkv release this header belongs to, as numbers for the preprocessor
// and as a string. They agree with the VERSION of the project in
// CMakeLists.txt (configuring checks it) and with the package version that
// find_package(gpkv) sees.
//
// The pool file format has its own version, independent of these; the
// formats a release opens are listed in docs/FORMAT.md and printed by
// `gpkv --version`.
#pragma once

#define GPKV_VERSION_MAJOR 0
#define GPKV_VERSION_MINOR 1
#define GPKV_VERSION_PATCH 0
#define GPKV_VERSION_STRING "0.1.0"

// GPKV_VERSION_NUMBER >= GPKV_MAKE_VERSION(0, 1, 0): this release or a later one.
#define GPKV_MAKE_VERSION(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
#define GPKV_VERSION_NUMBER \
  GPKV_MAKE_VERSION(GPKV_VERSION_MAJOR, GPKV_VERSION_MINOR, GPKV_VERSION_PATCH)
