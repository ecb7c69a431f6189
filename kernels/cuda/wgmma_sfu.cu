// Tensor pipe (wgmma) beside MUFU (ex2) or FP32 (FFMA) work on one Hopper SM: do the exponentials
// or FMAs of one warp group overlap the wgmmas of others? FlashAttention-3's ping-pong assumes they
// do; the FA-3 paper's measured TFLOP/s look as if they did not (docs/kernels.md, flash3, "Time"),
// and so do public runs of Triton's TMA attention kernel (docs/accuracy.md §5).
//
//   attnsim_cuda_wgmma_sfu [--iters N] [--device N]      (sm_90a; one CTA per SM, 3 warp groups)
//
// Modes, each timed with clock64() per warp group inside the kernel and with CUDA events:
//   mma1   warp group 0 issues N wgmma.m64n128k16 f32.f16.f16 (operands from shared memory) in
//          groups of 8 (commit, wait 0 every 8): one group's chain, as under ping-pong.
//   mma2   warp groups 0 and 1 do the same at once (two independent chains).
//   ex2    warp group 2 runs N x 64 independent ex2.approx.f32 per thread (MUFU.EX2).
//   both   mma2 and ex2 at once.
//   fma    warp group 2 runs N x 64 independent fma.rn.f32 per thread (FFMA).
//   both_fma  mma2 and fma at once.
//   mma1_ex2  mma1 and ex2 at once (one chain beside the exponentials, as under ping-pong).
// Prints one JSON object: per mode the cycles of each active group (max over CTAs), the tensor
// FLOP/cycle/SM and the ex2 (or FFMA) per cycle per SM. Overlap: cycles(both) ~ max(cycles(mma2),
// cycles(ex2)); no overlap: ~ their sum (likewise for fma). Exit codes: 0 ok, 1 CUDA error or not sm_90, 2 bad arguments.
// Not run in this repository's CI (no GPU): build with nvcc -gencode arch=compute_90a,code=sm_90a -O3
// (nvcc 13.0 rejects the wgmma instructions under -arch=sm_90a: it compiles them for compute_90).
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kModeMma1 = 0, kModeMma2 = 1, kModeEx2 = 2, kModeBoth = 3, kModeFma = 4, kModeBothFma = 5,
              kModeMma1Ex2 = 6, kModes = 7;
constexpr int kSmemBytes = 16384;

// A shared-memory matrix descriptor (PTX ISA, wgmma, "Matrix Descriptor"): start address >> 4 in
// bits 0-13, leading byte offset >> 4 in bits 16-29, stride byte offset >> 4 in bits 32-45, no
// swizzle. The operands are zeros: only the timing matters.
__device__ uint64_t descriptor(const void* smem, uint32_t lbo, uint32_t sbo) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return (static_cast<uint64_t>((addr & 0x3FFFF) >> 4)) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32);
}

__device__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ float mma_chain(const unsigned char* smem, long long iters) {
  float d[64];
  for (float& x : d) x = 0.f;
  const uint64_t a = descriptor(smem, 128, 256), b = descriptor(smem + 4096, 128, 256);
  for (long long i = 0; i < iters; i += 8) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int k = 0; k < 8; ++k) wgmma_m64n128k16(d, a, b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
  float s = 0.f;
  for (float x : d) s += x;
  return s;
}

// 8 independent chains per thread of `iters` x 8 dependent instructions each: ex2.approx.f32
// (MUFU.EX2) or, with kFma, fma.rn.f32 (FFMA).
template <bool kFma>
__device__ float op_chain(long long iters, float seed) {
  float v[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = seed * (j + 1) * 1e-3f;
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        if constexpr (kFma)
          asm volatile("fma.rn.f32 %0, %0, 0f3F7FFFFF, 0f33800000;\n" : "+f"(v[j]));
        else
          asm volatile("ex2.approx.f32 %0, %0;\n" : "+f"(v[j]));
      }
  }
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += v[j];
  return s;
}

__global__ void __launch_bounds__(384, 1) probe(int mode, long long iters, long long* cycles, float* sink) {
  __shared__ __align__(128) unsigned char smem[kSmemBytes];
  for (int i = threadIdx.x; i < kSmemBytes; i += blockDim.x) smem[i] = 0;
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const bool mma = (wg == 0 && mode != kModeEx2 && mode != kModeFma) ||
                   (wg == 1 && (mode == kModeMma2 || mode == kModeBoth || mode == kModeBothFma));
  const bool ex2 = wg == 2 && (mode == kModeEx2 || mode == kModeBoth || mode == kModeMma1Ex2);
  const bool fma = wg == 2 && (mode == kModeFma || mode == kModeBothFma);
  const long long t0 = clock64();
  float s = 0.f;
  if (mma) s = mma_chain(smem, iters);
  if (ex2) s = op_chain<false>(iters, static_cast<float>(threadIdx.x));
  if (fma) s = op_chain<true>(iters, static_cast<float>(threadIdx.x));
  const long long t1 = clock64();
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * 3 + wg] = (mma || ex2 || fma) ? t1 - t0 : 0;
  if (s == 12345.f) sink[threadIdx.x] = s;  // keeps the work alive
}

}  // namespace

int main(int argc, char** argv) {
  long long iters = 4096;
  int device = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc) device = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--iters N] [--device N]\n", argv[0]);
      return 2;
    }
  }
  if (iters < 8 || iters % 8 != 0) {
    std::fprintf(stderr, "--iters must be a positive multiple of 8\n");
    return 2;
  }
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  if (p.major != 9) {
    std::fprintf(stderr, "needs compute capability 9.x (wgmma), device has %d.%d\n", p.major, p.minor);
    return 1;
  }
  const int ctas = p.multiProcessorCount;
  long long* cycles = nullptr;
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&cycles, sizeof(long long) * ctas * 3));
  CUDA_CHECK(cudaMalloc(&sink, sizeof(float) * 384));
  const char* names[kModes] = {"mma1", "mma2", "ex2", "both", "fma", "both_fma", "mma1_ex2"};
  std::string json = "{\n \"device\": \"" + std::string(p.name) + "\",\n \"sms\": " + std::to_string(ctas) +
                     ",\n \"iters\": " + std::to_string(iters) + ",\n \"modes\": {";
  for (int mode = 0; mode < kModes; ++mode) {
    probe<<<ctas, 384>>>(mode, iters, cycles, sink);  // warm-up
    CUDA_CHECK(cudaGetLastError());
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0));
    probe<<<ctas, 384>>>(mode, iters, cycles, sink);
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    long long host[3 * 1024] = {};
    CUDA_CHECK(cudaMemcpy(host, cycles, sizeof(long long) * ctas * 3, cudaMemcpyDeviceToHost));
    long long worst[3] = {0, 0, 0};
    for (int c = 0; c < ctas; ++c)
      for (int g = 0; g < 3; ++g) worst[g] = host[c * 3 + g] > worst[g] ? host[c * 3 + g] : worst[g];
    const long long mma_cycles = worst[0] > worst[1] ? worst[0] : worst[1];
    const double groups = (mode == kModeMma1 || mode == kModeMma1Ex2) ? 1 : (mode == kModeEx2 || mode == kModeFma ? 0 : 2);
    const double flops = groups * iters * 2.0 * 64 * 128 * 16;
    const bool with_fma = mode == kModeFma || mode == kModeBothFma;
    // Warp group 2's instructions: 128 threads x iters x 64 (ex2, or FFMA).
    const double ops = (mode == kModeMma1 || mode == kModeMma2) ? 0 : 128.0 * iters * 64;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s\n  \"%s\": {\"ms\": %.6f, \"cycles_wg\": [%lld, %lld, %lld], "
                  "\"tensor_flop_per_cycle_per_sm\": %.1f, \"%s_per_cycle_per_sm\": %.3f}",
                  mode ? "," : "", names[mode], ms, worst[0], worst[1], worst[2],
                  mma_cycles ? flops / mma_cycles : 0.0, with_fma ? "ffma" : "ex2", worst[2] ? ops / worst[2] : 0.0);
    json += buf;
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
  }
  json += "\n }\n}\n";
  std::fputs(json.c_str(), stdout);
  CUDA_CHECK(cudaFree(cycles));
  CUDA_CHECK(cudaFree(sink));
  return 0;
}
