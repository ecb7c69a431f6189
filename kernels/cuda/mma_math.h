// Device work shared by the compute microbenchmarks: one mma.sync.m16n8k16 (f32 += f16 x f16),
// one MUFU.EX2, a step of FA-2-softmax-like math on 8 values, and the operands a warp starts from.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace attnsim::cuda {

__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm volatile("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// One step of softmax-like math on 8 values: per value FFMA, FMNMX, MUFU.EX2, FADD and FMUL.
__device__ __forceinline__ void math_step(float (&v)[8], float& m, float& s) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float x = fmaf(v[i], 1.4427f, -m);
    m = fmaxf(m, v[i]);
    const float e = ex2(x);
    s += e;
    v[i] = e * 0.5f;
  }
}

// A thread's starting operands: half 1.0 pairs in A and B (varied by lane so that they are not
// constant-folded), zero accumulators for eight independent MMAs, and 8 math values.
__device__ __forceinline__ void init_operands(uint32_t (&a)[4], uint32_t (&b)[2], float (&acc)[8][4], float (&v)[8]) {
  const uint32_t h = 0x3c003c00u ^ static_cast<uint32_t>(threadIdx.x & 1);
  for (uint32_t& x : a) x = h;
  for (uint32_t& x : b) x = h;
  for (auto& r : acc)
    for (float& x : r) x = 0.f;
  for (int i = 0; i < 8; ++i) v[i] = static_cast<float>(threadIdx.x + i) * 1e-3f;
}

}  // namespace attnsim::cuda
