// Textbook attention as three launches, the simulator's `standard` kernel: S = scale * Q K^T
// (tiled GEMM, fp16 S to HBM), row softmax S -> P (fp16, causal mask applied here), O = P V.
// Plain shared-memory tiled SIMT GEMMs (64x64 tiles, k-step 16, 4x4 outputs per thread).
#include <cfloat>

#include "kernels/cuda/attention_cuda.h"

namespace attnsim::cuda {

namespace {

constexpr int kTile = 64;
constexpr int kStep = 16;
constexpr int kGemmThreads = 256;  // 16 x 16 threads, 4 x 4 outputs each
constexpr int kSoftmaxThreads = 256;

// C[m][n] = alpha * sum_k A[m][k] * B(k, n), fp32 accumulation, fp16 output. B(k, n) is
// b[n * ldb + k] when kBTransposed (K^T of a row-major K), else b[k * ldb + n].
template <bool kBTransposed>
__device__ void gemm_tile(const __half* a, const __half* b, __half* c, int m, int n, int k, int lda, int ldb,
                          int ldc, float alpha) {
  __shared__ float a_s[kStep][kTile + 1];
  __shared__ float b_s[kStep][kTile + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < k; k0 += kStep) {
    for (int i = threadIdx.x; i < kTile * kStep; i += kGemmThreads) {
      const int r = i / kStep, kk = i % kStep;  // A: rows of the tile, k fastest (coalesced)
      const int gm = m0 + r, gk = k0 + kk;
      a_s[kk][r] = (gm < m && gk < k) ? __half2float(a[static_cast<std::size_t>(gm) * lda + gk]) : 0.f;
    }
    for (int i = threadIdx.x; i < kTile * kStep; i += kGemmThreads) {
      int nn, kk;
      if (kBTransposed) {
        nn = i / kStep;
        kk = i % kStep;
      } else {
        kk = i / kTile;
        nn = i % kTile;
      }
      const int gn = n0 + nn, gk = k0 + kk;
      float x = 0.f;
      if (gn < n && gk < k)
        x = __half2float(kBTransposed ? b[static_cast<std::size_t>(gn) * ldb + gk]
                                      : b[static_cast<std::size_t>(gk) * ldb + gn]);
      b_s[kk][nn] = x;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kStep; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        av[i] = a_s[kk][ty * 4 + i];
        bv[i] = b_s[kk][tx * 4 + i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int gm = m0 + ty * 4 + i, gn = n0 + tx * 4 + j;
      if (gm < m && gn < n) c[static_cast<std::size_t>(gm) * ldc + gn] = __float2half(alpha * acc[i][j]);
    }
}

__global__ void __launch_bounds__(kGemmThreads)
    gemm_qk_kernel(const __half* q, const __half* k, __half* s, int seq_q, int seq_kv, int head_dim, float scale) {
  const std::size_t bh = blockIdx.z;
  gemm_tile<true>(q + bh * seq_q * head_dim, k + bh * seq_kv * head_dim, s + bh * seq_q * seq_kv, seq_q, seq_kv,
                  head_dim, head_dim, head_dim, seq_kv, scale);
}

__global__ void __launch_bounds__(kGemmThreads)
    gemm_pv_kernel(const __half* p, const __half* v, __half* o, int seq_q, int seq_kv, int head_dim) {
  const std::size_t bh = blockIdx.z;
  gemm_tile<false>(p + bh * seq_q * seq_kv, v + bh * seq_kv * head_dim, o + bh * seq_q * head_dim, seq_q, head_dim,
                   seq_kv, seq_kv, head_dim, head_dim, 1.f);
}

__device__ float block_reduce(float x, bool is_max) {
  __shared__ float partial[kSoftmaxThreads / 32];
  for (int off = 16; off > 0; off >>= 1) {
    const float y = __shfl_xor_sync(0xffffffffu, x, off);
    x = is_max ? fmaxf(x, y) : x + y;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  float r = partial[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) r = is_max ? fmaxf(r, partial[w]) : r + partial[w];
  __syncthreads();
  return r;
}

// One CTA per score row: max, sum of exponentials, then P = exp(S - max) / sum. Reads S three
// times (the second and third mostly from L1/L2), writes P once.
__global__ void __launch_bounds__(kSoftmaxThreads)
    row_softmax_kernel(const __half* s, __half* p, int seq_q, int seq_kv, int causal) {
  const std::size_t row_id = blockIdx.x;
  const int row = static_cast<int>(row_id % seq_q);
  const __half* in = s + row_id * seq_kv;
  __half* out = p + row_id * seq_kv;
  const int visible = causal ? min(seq_kv, row + (seq_kv - seq_q) + 1) : seq_kv;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < visible; j += kSoftmaxThreads) mx = fmaxf(mx, __half2float(in[j]));
  mx = block_reduce(mx, true);
  float sum = 0.f;
  for (int j = threadIdx.x; j < visible; j += kSoftmaxThreads) sum += __expf(__half2float(in[j]) - mx);
  sum = block_reduce(sum, false);
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
  for (int j = threadIdx.x; j < seq_kv; j += kSoftmaxThreads)
    out[j] = __float2half(j < visible ? __expf(__half2float(in[j]) - mx) * inv : 0.f);
}

}  // namespace

void launch_standard(const AttentionShape& s, const __half* q, const __half* k, const __half* v, __half* scores,
                     __half* probs, __half* o, cudaStream_t stream) {
  const unsigned bh = static_cast<unsigned>(s.batch * s.heads);
  const float scale = 1.f / sqrtf(static_cast<float>(s.head_dim));
  const dim3 grid_s((s.seq_kv + kTile - 1) / kTile, (s.seq_q + kTile - 1) / kTile, bh);
  gemm_qk_kernel<<<grid_s, kGemmThreads, 0, stream>>>(q, k, scores, s.seq_q, s.seq_kv, s.head_dim, scale);
  ATTNSIM_CUDA_CHECK(cudaGetLastError());
  const unsigned rows = bh * static_cast<unsigned>(s.seq_q);
  row_softmax_kernel<<<rows, kSoftmaxThreads, 0, stream>>>(scores, probs, s.seq_q, s.seq_kv, s.causal ? 1 : 0);
  ATTNSIM_CUDA_CHECK(cudaGetLastError());
  const dim3 grid_o((s.head_dim + kTile - 1) / kTile, (s.seq_q + kTile - 1) / kTile, bh);
  gemm_pv_kernel<<<grid_o, kGemmThreads, 0, stream>>>(probs, v, o, s.seq_q, s.seq_kv, s.head_dim);
  ATTNSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace attnsim::cuda
