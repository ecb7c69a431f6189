// One-operation kernels whose SASS tells the sm_90 opcode of each instruction the softmax analogs
// use (pipes.py --identify): each kernel's body repeats one operation 63 times, so its opcode is
// the one that appears 63 (or 61-64) times besides the loads and stores.
#include <cuda_fp16.h>
#define N 64
extern "C" __global__ void k_fmax(const float* a, float* o) { float x = a[threadIdx.x]; 
#pragma unroll
 for (int i = 1; i < N; ++i) x = fmaxf(x, a[threadIdx.x + i * 32]); o[threadIdx.x] = x; }
extern "C" __global__ void k_fadd(const float* a, float* o) { float x = a[threadIdx.x];
#pragma unroll
 for (int i = 1; i < N; ++i) x = x + a[threadIdx.x + i * 32]; o[threadIdx.x] = x; }
extern "C" __global__ void k_fsel(const float* a, float* o) { float x = 0;
#pragma unroll
 for (int i = 1; i < N; ++i) { float v = a[threadIdx.x + i * 32]; x += (v > 0.5f ? v : 3.f); } o[threadIdx.x] = x; }
extern "C" __global__ void k_iadd(const int* a, int* o) { int x = a[threadIdx.x];
#pragma unroll
 for (int i = 1; i < N; ++i) x = x + a[threadIdx.x + i * 32] + i; o[threadIdx.x] = x; }
extern "C" __global__ void k_lop(const int* a, int* o) { int x = a[threadIdx.x];
#pragma unroll
 for (int i = 1; i < N; ++i) x = (x & a[threadIdx.x + i * 32]) ^ i; o[threadIdx.x] = x; }
extern "C" __global__ void k_shf(const int* a, int* o) { int x = a[threadIdx.x];
#pragma unroll
 for (int i = 1; i < N; ++i) x = x + (a[threadIdx.x + i * 32] >> (x & 7)); o[threadIdx.x] = x; }
extern "C" __global__ void k_imad(const int* a, int* o) { int x = a[threadIdx.x];
#pragma unroll
 for (int i = 1; i < N; ++i) x = x * a[threadIdx.x + i * 32] + 7; o[threadIdx.x] = x; }
extern "C" __global__ void k_h2f(const __half* a, float* o) { float x = 0;
#pragma unroll
 for (int i = 1; i < N; ++i) x = x * 1.5f + __half2float(a[threadIdx.x + i * 32]); o[threadIdx.x] = x; }
extern "C" __global__ void k_f2h(const float* a, __half* o) {
#pragma unroll
 for (int i = 1; i < N; ++i) o[threadIdx.x + i * 32] = __float2half(a[threadIdx.x + i * 32]); }
extern "C" __global__ void k_isetp(const int* a, int* o) { int x = 0;
#pragma unroll
 for (int i = 1; i < N; ++i) { int v = a[threadIdx.x + i * 32]; x += v < i ? v : 5; } o[threadIdx.x] = x; }
extern "C" __global__ void k_div(const float* a, float* o) { float x = 1;
#pragma unroll
 for (int i = 1; i < N; ++i) x = x / a[threadIdx.x + i * 32]; o[threadIdx.x] = x; }
extern "C" __global__ void k_exp(const float* a, float* o) { float x = 0;
#pragma unroll
 for (int i = 1; i < N; ++i) x += expf(a[threadIdx.x + i * 32]); o[threadIdx.x] = x; }
extern "C" __global__ void k_shfl(const float* a, float* o) { float x = a[threadIdx.x];
#pragma unroll
 for (int i = 1; i < N; ++i) x += __shfl_xor_sync(0xffffffffu, x, i & 31); o[threadIdx.x] = x; }
extern "C" __global__ void k_lea(const int* const* a, int* o) { int x = 0;
#pragma unroll
 for (int i = 1; i < N; ++i) x += a[i][threadIdx.x * 3 + i]; o[threadIdx.x] = x; }
extern "C" __global__ void k_fmul(const float* a, float* o) { float x = a[threadIdx.x];
#pragma unroll
 for (int i = 1; i < N; ++i) x = x * a[threadIdx.x + i * 32]; o[threadIdx.x] = x; }
