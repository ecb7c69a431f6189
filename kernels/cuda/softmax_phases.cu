// Where a row softmax of PyTorch's warp-kernel structure spends its time on the GPU: the kernel
// whole and by phase. kernels.csv's softmax_warp_forward rows (B1 H32, N = 1024 and 2048: 54.7
// and 293.9 us on the H200) are 27 and 49 % slower than the model, which issues the kernel's
// executed SASS instructions at the SM's full rate (docs/accuracy.md §3, "Softmax time").
//
//   attnsim_cuda_softmax_phases [--reps N] [--device N]      (sm_80 or newer)
//
// The kernel (written for this measurement, not PyTorch's code) has the structure and arithmetic
// of softmax_warp_forward: one warp per row, 4 rows per 128-thread CTA, the row in registers
// (32 or 64 values per lane, one 2-byte load and store per value), full-precision expf and IEEE
// division (PyTorch builds without fast math), the same as
// experiments/h200_validation/softmax_sass/softmax_analogs.cu. Variants:
//   as_is      as above
//   no_load    the row's values made from the lane and row index: no loads, the same arithmetic
//              and stores (the compute and store time alone)
//   fast_math  __expf and one reciprocal per row, a multiply per value: fewer instructions
//   untimed    as_is without the clock readings (their cost: compare its time with as_is')
// Each warp's lane 0 reads clock64() at the phase boundaries: loads and the running max, the max
// reduction (5 shuffles), exp and the running sum, the sum reduction, division and stores.
// Prints one JSON object: per case the kernel time (median of --reps launches, CUDA events), the
// GB/s it moves (2 bytes read and written per value), the theoretical CTAs per SM, the mean
// cycles of each phase and of a warp's life, and the mean number of warps resident on an SM
// while it works (the warps' summed lifetimes over the span from the SM's first start to its
// last end, per SM, averaged). Exit codes: 0 ok, 1 CUDA error or older than sm_80, 2 bad
// arguments. Not run in CI (no GPU).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math_constants.h>

#include "kernels/cuda/bench_cli.h"
#include "kernels/cuda/cuda_check.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kAsIs = 0, kNoLoad = 1, kFastMath = 2;
constexpr int kStamps = 7;  // smid, then 6 clock64 readings per warp

// clock64 after `v` is known (the asm takes it as an input, so it is read after v's producers).
__device__ __forceinline__ long long clock_after(float v) {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) : "f"(v) : "memory");
  return t;
}

__device__ __forceinline__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Lane 0 stores each reading at once (a reading kept in registers would raise the register count
// and lower the occupancy). __launch_bounds__ asks for PyTorch's occupancy: kernels.csv measured
// 48 registers (10 CTAs per SM) at N = 1024 and 80 (6 CTAs) at N = 2048.
template <int kElems, int kVariant, bool kStamp>
__global__ void __launch_bounds__(128, kElems <= 32 ? 10 : 6)
    warp_softmax(const __half* __restrict__ src, __half* __restrict__ dst, int cols, int rows, long long* stamps) {
  const int row = blockIdx.x * 4 + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  long long* p = stamps + static_cast<size_t>(row) * kStamps;
  const bool stamp = kStamp && lane == 0;
  if (stamp) p[0] = smid(), p[1] = clock_after(0.f);
  const __half* s = src + static_cast<size_t>(row) * cols;
  __half* d = dst + static_cast<size_t>(row) * cols;
  float v[kElems];
#pragma unroll
  for (int i = 0; i < kElems; ++i) {
    const int c = lane + i * 32;
    if (kVariant == kNoLoad)
      v[i] = c < cols ? static_cast<float>((lane * 7 + row * 3 + i * 13) & 127) * 0.03125f - 2.f : -CUDART_INF_F;
    else
      v[i] = c < cols ? __half2float(s[c]) : -CUDART_INF_F;
  }
  float m = v[0];
#pragma unroll
  for (int i = 1; i < kElems; ++i) m = fmaxf(m, v[i]);
  if (stamp) p[2] = clock_after(m);
#pragma unroll
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (stamp) p[3] = clock_after(m);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kElems; ++i) {
    v[i] = kVariant == kFastMath ? __expf(v[i] - m) : expf(v[i] - m);
    sum += v[i];
  }
  if (stamp) p[4] = clock_after(sum);
#pragma unroll
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (stamp) p[5] = clock_after(sum);
  const float r = kVariant == kFastMath ? __frcp_rn(sum) : 0.f;
  float last = 0.f;
#pragma unroll
  for (int i = 0; i < kElems; ++i) {
    const int c = lane + i * 32;
    const float y = kVariant == kFastMath ? v[i] * r : v[i] / sum;
    if (c < cols) d[c] = __float2half(y);
    last = y;
  }
  if (stamp) p[6] = clock_after(last);
}

__global__ void fill(__half* x, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint32_t h = static_cast<uint32_t>(i) * 2654435761u;
    x[i] = __float2half(static_cast<float>(h >> 8) * (8.f / 16777216.f) - 4.f);  // [-4, 4)
  }
}

using Kernel = void (*)(const __half*, __half*, int, int, long long*);

struct Case {
  const char* variant;
  int cols;
  bool stamped;
  Kernel kernel;
};

}  // namespace

int main(int argc, char** argv) {
  long long reps_option = 5;
  int device = 0;
  attnsim::cuda::parse_options(argc, argv, "attnsim_cuda_softmax_phases", "--reps", 1, 1000, &reps_option, &device);
  const int reps = static_cast<int>(reps_option);
  const cudaDeviceProp prop = attnsim::cuda::open_device(device, "attnsim_cuda_softmax_phases");
  const int sms = prop.multiProcessorCount;
  const int heads = 32, max_cols = 2048;
  const size_t max_values = static_cast<size_t>(heads) * max_cols * max_cols;
  __half *src = nullptr, *dst = nullptr;
  long long* stamps = nullptr;
  CUDA_CHECK(cudaMalloc(&src, max_values * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&dst, max_values * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&stamps, static_cast<size_t>(heads) * max_cols * kStamps * sizeof(long long)));
  fill<<<4 * sms, 256>>>(src, max_values);
  CUDA_CHECK(cudaGetLastError());
  const Case cases[] = {{"untimed", 1024, false, warp_softmax<32, kAsIs, false>},
                        {"untimed", 2048, false, warp_softmax<64, kAsIs, false>},
                        {"as_is", 1024, true, warp_softmax<32, kAsIs, true>},
                        {"as_is", 2048, true, warp_softmax<64, kAsIs, true>},
                        {"no_load", 1024, true, warp_softmax<32, kNoLoad, true>},
                        {"no_load", 2048, true, warp_softmax<64, kNoLoad, true>},
                        {"fast_math", 1024, true, warp_softmax<32, kFastMath, true>},
                        {"fast_math", 2048, true, warp_softmax<64, kFastMath, true>}};
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  std::printf("{\"device\": \"%s\", \"sm_count\": %d, \"heads\": %d, \"reps\": %d, \"cases\": [", prop.name, sms, heads,
              reps);
  bool first = true;
  for (const Case& c : cases) {
    const int rows = heads * c.cols;
    const int ctas = (rows + 3) / 4;
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, c.kernel, 128, 0));
    c.kernel<<<ctas, 128>>>(src, dst, c.cols, rows, stamps);  // warm-up
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
      CUDA_CHECK(cudaEventRecord(e0));
      c.kernel<<<ctas, 128>>>(src, dst, c.cols, rows, stamps);
      CUDA_CHECK(cudaEventRecord(e1));
      CUDA_CHECK(cudaEventSynchronize(e1));
      float t = 0.f;
      CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double us = 1e3 * ms[ms.size() / 2];
    std::vector<long long> h(static_cast<size_t>(rows) * kStamps, 0);
    if (c.stamped)
      CUDA_CHECK(cudaMemcpy(h.data(), stamps, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    double phase[5] = {0, 0, 0, 0, 0}, life = 0;
    std::vector<long long> lo(sms, -1), hi(sms, -1);
    std::vector<double> busy(sms, 0.0);
    for (int w = 0; w < rows; ++w) {
      const long long* p = &h[static_cast<size_t>(w) * kStamps];
      for (int k = 0; k < 5; ++k) phase[k] += static_cast<double>(p[k + 2] - p[k + 1]);
      life += static_cast<double>(p[6] - p[1]);
      const int sm = static_cast<int>(p[0]);
      if (!c.stamped || sm < 0 || sm >= sms) continue;
      busy[sm] += static_cast<double>(p[6] - p[1]);
      lo[sm] = lo[sm] < 0 ? p[1] : std::min(lo[sm], p[1]);
      hi[sm] = std::max(hi[sm], p[6]);
    }
    double resident = 0;
    int used = 0;
    for (int sm = 0; sm < sms; ++sm)
      if (hi[sm] > lo[sm] && lo[sm] >= 0) {
        resident += busy[sm] / static_cast<double>(hi[sm] - lo[sm]);
        ++used;
      }
    const double bytes = 4.0 * static_cast<double>(rows) * c.cols;  // 2 B read + 2 B written per value
    std::printf(
        "%s\n  {\"variant\": \"%s\", \"cols\": %d, \"rows\": %d, \"ctas_per_sm\": %d, \"us\": %.2f, \"gb_per_s\": %.1f, "
        "\"warp_cycles\": {\"loads_and_max\": %.0f, \"max_reduce\": %.0f, \"exp_and_sum\": %.0f, \"sum_reduce\": %.0f, "
        "\"divide_and_store\": %.0f, \"life\": %.0f}, \"mean_resident_warps_per_sm\": %.2f}",
        first ? "" : ",", c.variant, c.cols, rows, per_sm, us, bytes / us * 1e-3, phase[0] / rows, phase[1] / rows,
        phase[2] / rows, phase[3] / rows, phase[4] / rows, life / rows, used ? resident / used : 0.0);
    first = false;
  }
  std::printf("\n]}\n");
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  CUDA_CHECK(cudaFree(stamps));
  return 0;
}
