// CUDA_CHECK: a CUDA runtime call that prints the error and exits with status 1 (the standalone
// microbenchmark programs' exit code for a CUDA error).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(x)                                                                                \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)
