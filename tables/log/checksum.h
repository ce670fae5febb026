// The position-keyed checksum (layout.h: ChecksumTerm, ChecksumFinish) summed
// on CPU threads over words in host memory or the pool: a columnar record's,
// when it is written and when it is read back, and the ordered table's runs'.
//
// Who may call: the table families and tests. Thread safety: plain
// functions; each call runs its own OpenMP team of `threads` threads.
#pragma once

#include <cstdint>

namespace gpkv::log {

// Sum of the checksum terms of `count` words whose positions start at
// `first`, read from `words` (8-byte aligned or not), on `threads` threads.
uint64_t SumTerms(uint64_t seed, uint64_t first, const void* words, uint64_t count, int threads);

// SumTerms of `bytes` bytes read as words from position *words on, the last
// word completed by zero padding (as records and runs store it); advances
// *words past them.
uint64_t SumPaddedTerms(uint64_t seed, uint64_t* words, const uint8_t* data, uint64_t bytes,
                        int threads);

// The checksum of `count` contiguous words with `seed`: a columnar record's
// data words, read back.
uint64_t PositionChecksum(uint64_t seed, const void* words, uint64_t count, int threads = 1);

}  // namespace gpkv::log
