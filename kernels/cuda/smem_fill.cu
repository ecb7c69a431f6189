// Do the bytes cp.async writes into shared memory take the banks from shared-memory reads? The
// question behind attnsim's sm.async_fills_take_banks (configs/devices/README.md; docs/accuracy.md §6).
//
//   attnsim_cuda_smem_fill [--reads N] [--device N]     (sm_80 or newer)
//
// One CTA per SM of 8 warps. Warps 0-3 read a 32 KiB shared buffer with conflict-free 16-B loads
// (--reads N iterations per warp, default 4096: 512 B a warp-wide load, N x 2 KiB per CTA) and time
// themselves with clock64(). Warps 4-7 idle (`alone`) or, while the readers run, copy 32 KiB
// rounds from an L2-resident 1 MiB buffer into a second shared buffer with cp.async.cg (16 B a
// thread, commit, wait_all) and count the bytes (`beside`). The JSON printed holds, over three
// runs, the median reader-warp cycles alone and beside the copies, and the median bytes copied per
// CTA while its readers ran.
// Reading: if the copies' writes take the banks, the readers beside them are slower by about
// copied bytes / 128 cycles (32 banks x 4 B per cycle); if the readers' time does not move, the
// writes use other cycles or ports (experiments/calibration/decide.py turns it into the key).
// Exit codes: 0 ok, 1 CUDA error, 2 bad arguments. Not run in CI (no GPU).
#include <cuda_runtime.h>

#include "kernels/cuda/bench_cli.h"
#include "kernels/cuda/cuda_check.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int kThreads = 256;
constexpr int kReaders = 4;                                     // warps 0-3 read, 4-7 copy
constexpr int kBufInt4 = 2048;                                  // 32 KiB per shared buffer
constexpr int kSrcInt4 = (1 << 20) / 16;                        // 1 MiB source: stays in the L2
constexpr int kCopyInt4PerThread = kBufInt4 / (kThreads - kReaders * 32);  // 16 per copier thread

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}

// read_cycles: per CTA and reader warp; copied: bytes per CTA copied while its readers ran.
__global__ void reads_beside_copies(const int4* __restrict__ src, int reads, int copy, long long* read_cycles,
                                    long long* copied, int* sink) {
  extern __shared__ int4 smem[];  // [0, kBufInt4): read; [kBufInt4, 2 kBufInt4): copied into
  __shared__ int readers_done;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = threadIdx.x; i < kBufInt4; i += kThreads) smem[i] = make_int4(i, i + 1, i + 2, i + 3);
  if (threadIdx.x == 0) readers_done = 0;
  __syncthreads();
  if (warp < kReaders) {
    const int t = warp * 32 + lane;
    int4 acc = make_int4(0, 0, 0, 0);
    const long long t0 = clock64();
#pragma unroll 8
    for (int i = 0; i < reads; ++i) {
      const int4 v = smem[(i * kReaders * 32 + t) & (kBufInt4 - 1)];  // 4 warps: 2 KiB, conflict-free
      acc.x ^= v.x;
      acc.y ^= v.y;
      acc.z ^= v.z;
      acc.w ^= v.w;
    }
    const long long t1 = clock64();
    if (lane == 0) {
      read_cycles[blockIdx.x * kReaders + warp] = t1 - t0;
      atomicAdd(&readers_done, 1);
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff) sink[t] = acc.x;  // keeps the reads
  } else if (copy) {
    const int c = threadIdx.x - kReaders * 32;  // 0 .. 127
    long long rounds = 0;
    while (*static_cast<volatile int*>(&readers_done) < kReaders) {
      const int4* from = src + (rounds * kBufInt4) % kSrcInt4;
      for (int i = 0; i < kCopyInt4PerThread; ++i)
        cp_async16(&smem[kBufInt4 + i * 128 + c], &from[i * 128 + c]);
      asm volatile("cp.async.commit_group;\n" ::: "memory");
      asm volatile("cp.async.wait_all;\n" ::: "memory");
      ++rounds;
    }
    if (c == 0) copied[blockIdx.x] = rounds * kBufInt4 * 16;
  }
}

}  // namespace

int main(int argc, char** argv) {
  long long reads = 4096;
  int device = 0;
  attnsim::cuda::parse_options(argc, argv, "attnsim_cuda_smem_fill", "--reads", 64, 1 << 22, &reads, &device);
  const cudaDeviceProp prop = attnsim::cuda::open_device(device, "attnsim_cuda_smem_fill");
  const int ctas = prop.multiProcessorCount;
  int4* src = nullptr;
  long long *cycles = nullptr, *copied = nullptr;
  int* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&src, static_cast<size_t>(kSrcInt4) * sizeof(int4)));
  CUDA_CHECK(cudaMemset(src, 1, static_cast<size_t>(kSrcInt4) * sizeof(int4)));
  CUDA_CHECK(cudaMalloc(&cycles, static_cast<size_t>(ctas) * kReaders * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&copied, static_cast<size_t>(ctas) * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&sink, kThreads * sizeof(int)));
  const int smem = 2 * kBufInt4 * static_cast<int>(sizeof(int4));
  reads_beside_copies<<<ctas, kThreads, smem>>>(src, 64, 1, cycles, copied, sink);  // warm-up: code, L2, clocks
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  long long result[2] = {0, 0}, bytes = 0;
  for (int copy = 0; copy < 2; ++copy) {
    std::vector<long long> warp_cycles, cta_bytes;
    for (int r = 0; r < 3; ++r) {
      CUDA_CHECK(cudaMemset(copied, 0, static_cast<size_t>(ctas) * sizeof(long long)));
      reads_beside_copies<<<ctas, kThreads, smem>>>(src, static_cast<int>(reads), copy, cycles, copied, sink);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<long long> host(static_cast<size_t>(ctas) * kReaders), b(static_cast<size_t>(ctas));
      CUDA_CHECK(cudaMemcpy(host.data(), cycles, host.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(b.data(), copied, b.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      warp_cycles.insert(warp_cycles.end(), host.begin(), host.end());
      cta_bytes.insert(cta_bytes.end(), b.begin(), b.end());
    }
    result[copy] = attnsim::cuda::median(warp_cycles);
    if (copy) bytes = attnsim::cuda::median(cta_bytes);
  }
  std::printf("{\"device\": \"%s\", \"sm_count\": %d, \"ctas\": %d, \"reads_per_warp\": %lld, "
              "\"read_bytes_per_cta\": %lld, \"read_cycles_alone\": %lld, \"read_cycles_beside_copies\": %lld, "
              "\"copied_bytes_per_cta\": %lld}\n",
              prop.name, prop.multiProcessorCount, ctas, reads, reads * kReaders * 512, result[0], result[1], bytes);
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(cycles));
  CUDA_CHECK(cudaFree(copied));
  CUDA_CHECK(cudaFree(sink));
  return 0;
}
