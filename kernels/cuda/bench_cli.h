// The standalone microbenchmarks' command line ([OPTION N] [--device N]), device check and median:
// bad arguments are exit 2, a CUDA error or a GPU older than sm_80 exit 1 (their documented codes).
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace attnsim::cuda {

// Reads `option` N (an integer in [lo, hi]) into *value and --device N (>= 0) into *device, both
// optional; prints the usage of `program` and exits 2 on anything else.
inline void parse_options(int argc, char** argv, const char* program, const char* option, long long lo, long long hi,
                          long long* value, int* device) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == option || arg == "--device") && i + 1 < argc) {
      char* end = nullptr;
      const long long v = std::strtoll(argv[++i], &end, 10);
      const bool ok = *end == '\0' && (arg == option ? v >= lo && v <= hi : v >= 0 && v <= 1024);
      if (!ok) {
        std::fprintf(stderr, "%s: %s %s out of range\n", program, arg.c_str(), argv[i]);
        std::exit(2);
      }
      if (arg == option) *value = v;
      else *device = static_cast<int>(v);
    } else {
      std::fprintf(stderr, "usage: %s [%s N] [--device N]\n", program, option);
      std::exit(2);
    }
  }
}

// Selects `device` and returns its properties; exits 1 with `program`'s message below sm_80.
inline cudaDeviceProp open_device(int device, const char* program) {
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (prop.major < 8) {
    std::fprintf(stderr, "%s: needs sm_80 or newer (device is sm_%d%d)\n", program, prop.major, prop.minor);
    std::exit(1);
  }
  return prop;
}

// The median of `v` (the upper one of an even count; 0 when empty).
inline long long median(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace attnsim::cuda
