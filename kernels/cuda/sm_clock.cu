// The SM clock a GPU actually runs at under each kind of load (clock64 against %globaltimer): whether
// power management lowers it below the presets' clock_ghz in issue-, tensor- or HBM-heavy kernels
// (docs/accuracy.md, "Open items": a lower SM clock under load).
//
//   attnsim_cuda_sm_clock [--ms N] [--device N]     (sm_80 or newer; default 200 ms per sustained run)
//
// Every SM busy. Loads (one CTA per SM unless said):
//   spin     one warp per SM reading the clocks (the light-load clock)
//   issue    32 warps per SM of softmax-like math (FFMA, FMNMX, MUFU.EX2, FADD, FMUL): issue-bound
//   mma      8 warps per SM of independent mma.sync.m16n8k16 f32.f16.f16.f32: tensor-bound
//   mma_math 4 mma warps and 4 math warps per SM (FA-2's mix)
//   stream   4 CTAs of 4 warps per SM reading a 1 GiB buffer over and over (HBM-bound)
// Each load runs twice: `short` for 2 ms after 100 ms idle (a profiled kernel after the profiler's
// cache flush), then `sustained` for --ms right after a first --ms run of the same load (the clock
// power management settles at). Per run: the clock of each CTA = its clock64 cycles / its
// globaltimer nanoseconds; prints one JSON object with the median, minimum and maximum over CTAs in
// MHz, and the device's clockRate for reference. Exit codes: 0 ok, 1 CUDA error, 2 bad arguments.
// Not run in CI (no GPU).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/bench_cli.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/mma_math.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using attnsim::cuda::init_operands;
using attnsim::cuda::math_step;
using attnsim::cuda::mma16816;

enum Mode { kSpin = 0, kIssue, kMma, kMmaMath, kStream };

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// cycles / ns: per CTA, its clock64 cycles and globaltimer nanoseconds from its start to the first
// check past `duration_ns`. In kMmaMath the first half of the warps run MMAs, the rest math.
template <int mode>  // one instantiation per load, so that each holds only the registers it uses
__global__ void __launch_bounds__(1024) load_kernel(unsigned long long duration_ns, const float4* buf, size_t buf_vectors,
                            long long* cycles, long long* ns, float* sink) {
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const bool mma_warp = mode == kMma || (mode == kMmaMath && warp < warps / 2);
  const bool math_warp = mode == kIssue || (mode == kMmaMath && warp >= warps / 2);
  uint32_t a[4], b[2];
  float acc[8][4], v[8];
  init_operands(a, b, acc, v);
  float m = 0.f, s = 0.f;
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
  size_t at = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) % buf_vectors;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  __syncthreads();
  const unsigned long long g0 = global_ns();
  const long long c0 = clock64();
  unsigned long long g = g0;
  while (g - g0 < duration_ns) {
    for (int it = 0; it < 64; ++it) {
      if (mma_warp) {
#pragma unroll
        for (int k = 0; k < 8; ++k) mma16816(acc[k], a, b);
      }
      if (math_warp) math_step(v, m, s);
      if (mode == kStream) {
        const float4 x = buf[at];
        sum.x += x.x, sum.y += x.y, sum.z += x.z, sum.w += x.w;
        at += stride;
        if (at >= buf_vectors) at -= buf_vectors;
      }
    }
    g = global_ns();
  }
  const long long c1 = clock64();
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = c1 - c0;
    ns[blockIdx.x] = static_cast<long long>(g - g0);
  }
  float r = m + s + sum.x + sum.y + sum.z + sum.w;
  for (auto& row : acc)
    for (float x : row) r += x;
  for (float x : v) r += x;
  if (r == 12345.678f) sink[threadIdx.x] = r;  // keeps the work; never true in practice
}

struct Load {
  const char* name;
  Mode mode;
  int ctas_per_sm, warps;
};

}  // namespace

int main(int argc, char** argv) {
  long long ms = 200;
  int device = 0;
  attnsim::cuda::parse_options(argc, argv, "attnsim_cuda_sm_clock", "--ms", 1, 10000, &ms, &device);
  const cudaDeviceProp prop = attnsim::cuda::open_device(device, "attnsim_cuda_sm_clock");
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  const int sms = prop.multiProcessorCount;
  const Load loads[] = {{"spin", kSpin, 1, 1},
                        {"issue", kIssue, 1, 32},
                        {"mma", kMma, 1, 8},
                        {"mma_math", kMmaMath, 1, 8},
                        {"stream", kStream, 4, 4}};
  const size_t buf_bytes = size_t{1} << 30, buf_vectors = buf_bytes / sizeof(float4);
  float4* buf = nullptr;
  long long *cycles = nullptr, *ns = nullptr;
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&buf, buf_bytes));
  CUDA_CHECK(cudaMemset(buf, 0, buf_bytes));
  CUDA_CHECK(cudaMalloc(&cycles, static_cast<size_t>(sms) * 4 * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&ns, static_cast<size_t>(sms) * 4 * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&sink, 1024 * sizeof(float)));
  std::printf("{\"device\": \"%s\", \"sm_count\": %d, \"clock_rate_mhz\": %.0f, \"sustained_ms\": %lld, \"loads\": {",
              prop.name, sms, clock_khz / 1000.0, ms);
  bool first = true;
  for (const Load& l : loads) {
    const int ctas = sms * l.ctas_per_sm;
    auto run = [&](long long run_ms) {
      const unsigned long long d = static_cast<unsigned long long>(run_ms) * 1000000ull;
      const dim3 grid(ctas), block(l.warps * 32);
      switch (l.mode) {
        case kSpin: load_kernel<kSpin><<<grid, block>>>(d, buf, buf_vectors, cycles, ns, sink); break;
        case kIssue: load_kernel<kIssue><<<grid, block>>>(d, buf, buf_vectors, cycles, ns, sink); break;
        case kMma: load_kernel<kMma><<<grid, block>>>(d, buf, buf_vectors, cycles, ns, sink); break;
        case kMmaMath: load_kernel<kMmaMath><<<grid, block>>>(d, buf, buf_vectors, cycles, ns, sink); break;
        case kStream: load_kernel<kStream><<<grid, block>>>(d, buf, buf_vectors, cycles, ns, sink); break;
      }
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<long long> c(static_cast<size_t>(ctas)), t(static_cast<size_t>(ctas));
      CUDA_CHECK(cudaMemcpy(c.data(), cycles, c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(t.data(), ns, t.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      std::vector<double> mhz;
      for (int i = 0; i < ctas; ++i)
        if (t[i] > 0) mhz.push_back(1000.0 * static_cast<double>(c[i]) / static_cast<double>(t[i]));
      std::sort(mhz.begin(), mhz.end());
      return mhz;
    };
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::vector<double> brief = run(2);
    run(ms);
    const std::vector<double> sustained = run(ms);
    auto print = [](const char* what, const std::vector<double>& v) {
      if (v.empty()) return std::printf("\"%s\": null", what), void();
      std::printf("\"%s\": {\"median_mhz\": %.1f, \"min_mhz\": %.1f, \"max_mhz\": %.1f}", what, v[v.size() / 2],
                  v.front(), v.back());
    };
    std::printf("%s\n  \"%s\": {\"ctas_per_sm\": %d, \"warps\": %d, ", first ? "" : ",", l.name, l.ctas_per_sm,
                l.warps);
    print("short", brief);
    std::printf(", ");
    print("sustained", sustained);
    std::printf("}");
    first = false;
  }
  std::printf("\n}}\n");
  CUDA_CHECK(cudaFree(buf));
  CUDA_CHECK(cudaFree(cycles));
  CUDA_CHECK(cudaFree(ns));
  CUDA_CHECK(cudaFree(sink));
  return 0;
}
