// GPKV_HD marks plain functions shared by host and device code. Outside nvcc
// it expands to nothing, so format/ stays standard C++.
#pragma once

#if defined(__CUDACC__)
#define GPKV_HD __host__ __device__ __forceinline__
#else
#define GPKV_HD inline
#endif
