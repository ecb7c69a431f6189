// The mma.sync (warp-level HMMA) rate one SM reaches, and whether FP32 / MUFU work overlaps it:
// the compute-phase questions behind FA-2's time on Hopper (docs/accuracy.md §6; the presets take
// mma.sync at 2/3 of the dense peak from the FlashAttention-3 paper).
//
//   attnsim_cuda_mma_sync_rate [--iters N] [--device N]     (sm_80 or newer)
//
// One CTA per SM, all SMs busy. Modes, each timed with clock64() per warp:
//   mma4, mma8    4 or 8 warps, each N x 8 independent mma.sync.m16n8k16 f32.f16.f16.f32 (eight
//                 accumulators, so the chain's latency does not bind)
//   math4         4 warps of FA-2-softmax-like math only: per step 8 x (FFMA, FMNMX, MUFU.EX2, FADD, FMUL)
//   mix           mma4 and math4 at once, in separate warps (8 warps): do they overlap?
//   alt8          8 warps, each alternating 8 mma.sync and the math of one step, the math using the
//                 accumulators (FA-2's in-warp order: S = QK^T, then softmax on S)
// Prints one JSON object: per mode the median cycles of its warps (max over warps for the whole
// CTA), the tensor FLOP per cycle per SM (4096 FLOP per mma.sync) and the math instructions per
// cycle per SM. Reading: mma4 / mma8 give the rate the `sm.mma.mma_sync.flops_per_cycle` key
// stands for; mix against mma4 and math4 tells whether other warps' math overlaps the MMAs (max)
// or not (sum); alt8 is the FA-2-like case. Exit codes: 0 ok, 1 CUDA error, 2 bad arguments.
// Not run in CI (no GPU).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/bench_cli.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/mma_math.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using attnsim::cuda::init_operands;
using attnsim::cuda::math_step;
using attnsim::cuda::mma16816;

constexpr int kModeMma = 0, kModeMath = 1, kModeMix = 2, kModeAlt = 3;

// cycles: per warp of each CTA, the cycles of its loop.
__global__ void rate_kernel(int mode, long long iters, long long* cycles, float* sink) {
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const bool mma_warp = mode == kModeMma || mode == kModeAlt || (mode == kModeMix && warp < warps / 2);
  const bool math_warp = mode == kModeMath || mode == kModeAlt || (mode == kModeMix && warp >= warps / 2);
  uint32_t a[4], b[2];
  float acc[8][4], v[8];
  init_operands(a, b, acc, v);
  float m = 0.f, s = 0.f;
  __syncthreads();
  const long long t0 = clock64();
  for (long long it = 0; it < iters; ++it) {
    if (mma_warp) {
#pragma unroll
      for (int k = 0; k < 8; ++k) mma16816(acc[k], a, b);
    }
    if (math_warp) {
      if (mode == kModeAlt) {
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = acc[k][0];  // the softmax reads S
      }
      math_step(v, m, s);
    }
  }
  const long long t1 = clock64();
  if (threadIdx.x % 32 == 0) cycles[static_cast<size_t>(blockIdx.x) * warps + warp] = t1 - t0;
  float r = m + s;
  for (auto& row : acc)
    for (float x : row) r += x;
  for (float x : v) r += x;
  if (r == 12345.678f) sink[threadIdx.x] = r;  // keeps the work; never true in practice
}

}  // namespace

int main(int argc, char** argv) {
  long long iters = 1 << 16;
  int device = 0;
  attnsim::cuda::parse_options(argc, argv, "attnsim_cuda_mma_sync_rate", "--iters", 1, 1ll << 40, &iters, &device);
  const cudaDeviceProp prop = attnsim::cuda::open_device(device, "attnsim_cuda_mma_sync_rate");
  const int sms = prop.multiProcessorCount;
  struct Mode {
    const char* name;
    int mode, warps, mma_warps, math_warps;
  };
  const Mode modes[] = {{"mma4", kModeMma, 4, 4, 0},
                        {"mma8", kModeMma, 8, 8, 0},
                        {"math4", kModeMath, 4, 0, 4},
                        {"mix", kModeMix, 8, 4, 4},
                        {"alt8", kModeAlt, 8, 8, 8}};
  long long* cycles = nullptr;
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&cycles, static_cast<size_t>(sms) * 8 * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&sink, 256 * sizeof(float)));
  rate_kernel<<<sms, 128>>>(kModeMma, 16, cycles, sink);  // warm-up
  CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("{\"device\": \"%s\", \"sm_count\": %d, \"iters\": %lld, \"modes\": {", prop.name, sms, iters);
  bool first = true;
  for (const Mode& md : modes) {
    rate_kernel<<<sms, md.warps * 32>>>(md.mode, iters, cycles, sink);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<long long> host(static_cast<size_t>(sms) * md.warps);
    CUDA_CHECK(cudaMemcpy(host.data(), cycles, host.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    std::vector<long long> sorted = host;
    std::sort(sorted.begin(), sorted.end());
    const long long median = sorted[sorted.size() / 2], worst = sorted.back();
    const double mma_flop = static_cast<double>(md.mma_warps) * static_cast<double>(iters) * 8 * 4096;
    const double math_inst = static_cast<double>(md.math_warps) * static_cast<double>(iters) * 8 * 5 * 32;
    std::printf("%s\n  \"%s\": {\"warps\": %d, \"median_cycles\": %lld, \"max_cycles\": %lld, "
                "\"tensor_flop_per_cycle_per_sm\": %.1f, \"math_thread_instr_per_cycle_per_sm\": %.1f}",
                first ? "" : ",", md.name, md.warps, median, worst, mma_flop / static_cast<double>(worst),
                math_inst / static_cast<double>(worst));
    first = false;
  }
  std::printf("\n}}\n");
  CUDA_CHECK(cudaFree(cycles));
  CUDA_CHECK(cudaFree(sink));
  return 0;
}
