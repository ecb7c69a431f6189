// Does a cp.async hold its warp until the load credits let its lines go, or does the warp go on
// while they wait in the load/store path? The question behind attnsim's sm.queue_async_copies
// (configs/devices/README.md; docs/accuracy.md §6).
//
//   attnsim_cuda_async_copy_issue [--ctas N] [--device N]     (sm_80 or newer)
//
// Each CTA (4 warps; --ctas of them, default 1: one CTA alone on the GPU; 0: one per SM) copies K x 16 B per
// thread from DRAM into shared memory with cp.async.cg (K = 0 ... 64: up to 128 KiB per CTA, each
// point from addresses no earlier point touched), commits, runs F dependent FFMAs per thread, then
// cp.async.wait_all. clock64() per warp after the copies are issued (`issue`), after the FFMAs
// (`compute`) and after the wait (`done`), in SM cycles from the start; the JSON printed holds the
// median over warps of each, per (K, F).
// Reading: with F = 0, `done` is the copies alone; with K = 0, the FFMAs alone. If `issue` stays
// small as K grows past what one CTA holds in flight (~5 KiB on the H200, docs/calibration.md)
// and `done` ~ max(copies alone, FFMAs alone), the copies were queued (queue_async_copies: true);
// if `issue` grows with K and `done` ~ their sum, the warp waited for its lines (false).
// Exit codes: 0 ok, 1 CUDA error, 2 bad arguments. Not run in CI (no GPU).
#include <cuda_runtime.h>

#include "kernels/cuda/bench_cli.h"
#include "kernels/cuda/cuda_check.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxCopies = 64;  // 16-B copies per thread: 128 KiB per CTA

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}

// times: per CTA and warp, {issue, compute, done} cycles from the start.
__global__ void copy_then_compute(const int4* __restrict__ src, int copies, int ffma, long long* times,
                                  float* sink) {
  extern __shared__ int4 buf[];
  const int4* from = src + static_cast<size_t>(blockIdx.x) * copies * kThreads;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < copies; ++i) cp_async16(&buf[i * kThreads + threadIdx.x], &from[i * kThreads + threadIdx.x]);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  const long long t1 = clock64();
  float a = static_cast<float>(threadIdx.x), b = 1.0001f;
  for (int i = 0; i < ffma; ++i) a = fmaf(a, b, 0.5f);
  const long long t2 = clock64();
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  const long long t3 = clock64();
  if (threadIdx.x % 32 == 0) {
    long long* t = times + (static_cast<size_t>(blockIdx.x) * kWarps + threadIdx.x / 32) * 3;
    t[0] = t1 - t0;
    t[1] = t2 - t0;
    t[2] = t3 - t0;
  }
  float s = a;
  if (copies > 0) s += static_cast<float>(buf[threadIdx.x].x);
  if (s == 12345.678f) sink[threadIdx.x] = s;  // keeps the work; never true in practice
}

}  // namespace

int main(int argc, char** argv) {
  long long ctas_option = 1;
  int device = 0;
  attnsim::cuda::parse_options(argc, argv, "attnsim_cuda_async_copy_issue", "--ctas", 0, 1 << 20, &ctas_option, &device);
  int ctas = static_cast<int>(ctas_option);
  const cudaDeviceProp prop = attnsim::cuda::open_device(device, "attnsim_cuda_async_copy_issue");
  if (ctas == 0) ctas = prop.multiProcessorCount;
  const int copies_list[] = {0, 1, 2, 4, 8, 16, 32, 64};
  const int ffma_list[] = {0, 4096, 16384};
  constexpr int kRepeats = 3;
  const size_t per_point = static_cast<size_t>(ctas) * kMaxCopies * kThreads;  // int4 per point
  const size_t points = sizeof(copies_list) / sizeof(int) * (sizeof(ffma_list) / sizeof(int)) * kRepeats;
  int4* src = nullptr;
  CUDA_CHECK(cudaMalloc(&src, per_point * points * sizeof(int4)));
  CUDA_CHECK(cudaMemset(src, 1, per_point * points * sizeof(int4)));
  long long* times = nullptr;
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&times, static_cast<size_t>(ctas) * kWarps * 3 * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&sink, kThreads * sizeof(float)));
  const int max_smem = kMaxCopies * kThreads * static_cast<int>(sizeof(int4));
  CUDA_CHECK(cudaFuncSetAttribute(copy_then_compute, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  copy_then_compute<<<ctas, kThreads, 16 * kThreads>>>(src, 1, 1, times, sink);  // warm-up (code, clocks)
  CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("{\"device\": \"%s\", \"sm_count\": %d, \"ctas\": %d, \"threads_per_cta\": %d, \"points\": [",
              prop.name, prop.multiProcessorCount, ctas, kThreads);
  size_t used = 0;
  bool first = true;
  std::vector<long long> host(static_cast<size_t>(ctas) * kWarps * 3);
  for (int copies : copies_list) {
    for (int ffma : ffma_list) {
      std::vector<long long> issue, compute, done;
      for (int r = 0; r < kRepeats; ++r) {
        const int4* from = src + per_point * used++;  // addresses no earlier point read: from DRAM
        copy_then_compute<<<ctas, kThreads, std::max(16, copies) * kThreads * static_cast<int>(sizeof(int4))>>>(
            from, copies, ffma, times, sink);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(host.data(), times, host.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        for (size_t w = 0; w < host.size() / 3; ++w) {
          issue.push_back(host[w * 3]);
          compute.push_back(host[w * 3 + 1]);
          done.push_back(host[w * 3 + 2]);
        }
      }
      std::printf("%s\n  {\"copy_bytes_per_cta\": %d, \"ffma_per_thread\": %d, \"issue_cycles\": %lld, "
                  "\"compute_cycles\": %lld, \"done_cycles\": %lld}",
                  first ? "" : ",", copies * 16 * kThreads, ffma, attnsim::cuda::median(issue),
                  attnsim::cuda::median(compute), attnsim::cuda::median(done));
      first = false;
    }
  }
  std::printf("\n]}\n");
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(times));
  CUDA_CHECK(cudaFree(sink));
  return 0;
}
