#include <cuda_fp16.h>
#include <math_constants.h>

// Softmax kernels with the structure and arithmetic of PyTorch's row softmaxes (written for this
// count, not PyTorch's code): one warp per row with the row in registers (softmax_warp_forward),
// one 1024-thread block per row with the row in registers (cunn_SoftMaxForwardReg) or staged in
// shared memory (cunn_SoftMaxForwardSmem), and the three-pass block kernel of releases before 2.4
// (cunn_SoftMaxForward, row_softmax_block). Full-precision expf and IEEE division, as PyTorch builds
// them (no fast math); the block kernels compute exp(x - max) twice, as PyTorch's epilogue does.
// count.sh compiles them for sm_90 and prints the SASS instructions each extra value per thread adds,
// and (chain.py) the load round trips and dependent-chain cycles of one warp at each size.
template <int kElems>
__global__ void row_softmax_warp(const __half* __restrict__ src, __half* __restrict__ dst, int cols) {
  const int row = blockIdx.x * 4 + threadIdx.x / 32, lane = threadIdx.x % 32;
  const __half* s = src + static_cast<size_t>(row) * cols;
  __half* d = dst + static_cast<size_t>(row) * cols;
  float v[kElems];
#pragma unroll
  for (int i = 0; i < kElems; ++i) {
    const int c = lane + i * 32;
    v[i] = c < cols ? __half2float(s[c]) : -CUDART_INF_F;
  }
  float m = v[0];
#pragma unroll
  for (int i = 1; i < kElems; ++i) m = fmaxf(m, v[i]);
#pragma unroll
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kElems; ++i) {
    v[i] = expf(v[i] - m);
    sum += v[i];
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
#pragma unroll
  for (int i = 0; i < kElems; ++i) {
    const int c = lane + i * 32;
    if (c < cols) d[c] = __float2half(v[i] / sum);
  }
}
template __global__ void row_softmax_warp<1>(const __half*, __half*, int);
template __global__ void row_softmax_warp<2>(const __half*, __half*, int);
template __global__ void row_softmax_warp<4>(const __half*, __half*, int);
template __global__ void row_softmax_warp<8>(const __half*, __half*, int);
template __global__ void row_softmax_warp<16>(const __half*, __half*, int);
template __global__ void row_softmax_warp<32>(const __half*, __half*, int);
template __global__ void row_softmax_warp<64>(const __half*, __half*, int);

// Block-per-row kernels: two block reductions (max, sum) through shared memory; output
// exp(x - max) / sum.
__device__ float block_reduce(float v, float* smem, bool is_max) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? smem[lane] : (is_max ? -CUDART_INF_F : 0.f);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) {
      const float w = __shfl_xor_sync(0xffffffffu, v, o);
      v = is_max ? fmaxf(v, w) : v + w;
    }
    if (lane == 0) smem[32] = v;
  }
  __syncthreads();
  const float r = smem[32];
  __syncthreads();
  return r;
}

template <int kIlp>
__global__ void row_softmax_reg(const __half* __restrict__ src, __half* __restrict__ dst, int cols) {
  __shared__ float smem[33];
  const __half* s = src + static_cast<size_t>(blockIdx.x) * cols;
  __half* d = dst + static_cast<size_t>(blockIdx.x) * cols;
  __half reg[kIlp];
  float m = -CUDART_INF_F;
#pragma unroll
  for (int i = 0; i < kIlp; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < cols) {
      reg[i] = s[c];
      m = fmaxf(m, __half2float(reg[i]));
    }
  }
  m = block_reduce(m, smem, true);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kIlp; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < cols) sum += expf(__half2float(reg[i]) - m);
  }
  sum = block_reduce(sum, smem, false);
#pragma unroll
  for (int i = 0; i < kIlp; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < cols) d[c] = __float2half(expf(__half2float(reg[i]) - m) / sum);
  }
}

template <int kPer>  // values per thread, staged in shared memory (cols = kPer * blockDim.x)
__global__ void row_softmax_smem(const __half* __restrict__ src, __half* __restrict__ dst, int cols) {
  // As cunn_SoftMaxForwardSmem: every pass moves 16-byte vectors of 8 halves (LoadT / StoreT,
  // ILP = sizeof(float4) / sizeof(half)): global -> shared with the max, shared -> registers for
  // the sum of exp, shared -> registers -> global for the output.
  extern __shared__ __half row[];
  __shared__ float smem[33];
  const __half* s = src + static_cast<size_t>(blockIdx.x) * cols;
  __half* d = dst + static_cast<size_t>(blockIdx.x) * cols;
  uint4* rv = reinterpret_cast<uint4*>(row);
  float m = -CUDART_INF_F;
#pragma unroll
  for (int i = 0; i < kPer / 8; ++i) {
    const int o = threadIdx.x + i * blockDim.x;  // vector index
    if (o * 8 < cols) {
      const uint4 v = reinterpret_cast<const uint4*>(s)[o];
      rv[o] = v;
      const __half* h = reinterpret_cast<const __half*>(&v);
#pragma unroll
      for (int j = 0; j < 8; ++j) m = fmaxf(m, __half2float(h[j]));
    }
  }
  m = block_reduce(m, smem, true);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kPer / 8; ++i) {
    const int o = threadIdx.x + i * blockDim.x;
    if (o * 8 < cols) {
      const uint4 v = rv[o];
      const __half* h = reinterpret_cast<const __half*>(&v);
#pragma unroll
      for (int j = 0; j < 8; ++j) sum += expf(__half2float(h[j]) - m);
    }
  }
  sum = block_reduce(sum, smem, false);
#pragma unroll
  for (int i = 0; i < kPer / 8; ++i) {
    const int o = threadIdx.x + i * blockDim.x;
    if (o * 8 < cols) {
      const uint4 v = rv[o];
      const __half* h = reinterpret_cast<const __half*>(&v);
      uint4 w;
      __half* out = reinterpret_cast<__half*>(&w);
#pragma unroll
      for (int j = 0; j < 8; ++j) out[j] = __float2half(expf(__half2float(h[j]) - m) / sum);
      reinterpret_cast<uint4*>(d)[o] = w;
    }
  }
}
template __global__ void row_softmax_reg<1>(const __half*, __half*, int);
template __global__ void row_softmax_reg<2>(const __half*, __half*, int);
template __global__ void row_softmax_reg<3>(const __half*, __half*, int);
template __global__ void row_softmax_reg<4>(const __half*, __half*, int);
template __global__ void row_softmax_reg<5>(const __half*, __half*, int);
template __global__ void row_softmax_reg<6>(const __half*, __half*, int);
template __global__ void row_softmax_reg<7>(const __half*, __half*, int);
template __global__ void row_softmax_reg<8>(const __half*, __half*, int);
template __global__ void row_softmax_smem<8>(const __half*, __half*, int);
template __global__ void row_softmax_smem<16>(const __half*, __half*, int);
template __global__ void row_softmax_smem<32>(const __half*, __half*, int);
template __global__ void row_softmax_smem<64>(const __half*, __half*, int);

// The block kernel PyTorch releases before the shared-memory one (pull request 122970, 2024)
// launch for rows of more than 1024 values (cunn_SoftMaxForward, with SoftMax_getBlockSize(ILP,
// cols): cols / 16 threads rounded up to a power of two, 32 … 512): three passes over the row in
// global memory, each moving 16-byte vectors of 8 halves (kPer / 8 per thread): the max, the sum of
// exp(x - max), then the output exp(x - max) / sum; the block reductions through shared memory
// (every thread stores its value; warp 0's lanes each reduce one warp's 32 values, thread 0
// reduces those; blockReduce before that pull request).
__device__ float block_reduce_smem(float v, float* smem, bool is_max) {
  __syncthreads();
  smem[threadIdx.x] = v;
  __syncthreads();
  float w = is_max ? -CUDART_INF_F : 0.f;
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    if (lane < blockDim.x / 32) {
#pragma unroll
      for (int i = 0; i < 32; ++i) w = is_max ? fmaxf(w, smem[lane * 32 + i]) : w + smem[lane * 32 + i];
      __syncwarp((1u << (blockDim.x / 32)) - 1);
      smem[lane] = w;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float b = is_max ? -CUDART_INF_F : 0.f;
    for (int i = 0; i < blockDim.x / 32; ++i) b = is_max ? fmaxf(b, smem[i]) : b + smem[i];
    smem[0] = b;
  }
  __syncthreads();
  return smem[0];
}

template <int kPer>  // values per thread (cols = kPer * blockDim.x)
__global__ void row_softmax_block(const __half* __restrict__ src, __half* __restrict__ dst, int cols) {
  extern __shared__ float red[];
  const uint4* s = reinterpret_cast<const uint4*>(src + static_cast<size_t>(blockIdx.x) * cols);
  uint4* d = reinterpret_cast<uint4*>(dst + static_cast<size_t>(blockIdx.x) * cols);
  float m = -CUDART_INF_F;
#pragma unroll
  for (int i = 0; i < kPer / 8; ++i) {
    const int o = threadIdx.x + i * blockDim.x;
    if (o * 8 < cols) {
      const uint4 v = s[o];
      const __half* h = reinterpret_cast<const __half*>(&v);
#pragma unroll
      for (int j = 0; j < 8; ++j) m = fmaxf(m, __half2float(h[j]));
    }
  }
  m = block_reduce_smem(m, red, true);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kPer / 8; ++i) {
    const int o = threadIdx.x + i * blockDim.x;
    if (o * 8 < cols) {
      const uint4 v = s[o];
      const __half* h = reinterpret_cast<const __half*>(&v);
#pragma unroll
      for (int j = 0; j < 8; ++j) sum += expf(__half2float(h[j]) - m);
    }
  }
  sum = block_reduce_smem(sum, red, false);
#pragma unroll
  for (int i = 0; i < kPer / 8; ++i) {
    const int o = threadIdx.x + i * blockDim.x;
    if (o * 8 < cols) {
      const uint4 v = s[o];
      const __half* h = reinterpret_cast<const __half*>(&v);
      uint4 w;
      __half* out = reinterpret_cast<__half*>(&w);
#pragma unroll
      for (int j = 0; j < 8; ++j) out[j] = __float2half(expf(__half2float(h[j]) - m) / sum);
      d[o] = w;
    }
  }
}
template __global__ void row_softmax_block<16>(const __half*, __half*, int);
template __global__ void row_softmax_block<32>(const __half*, __half*, int);
