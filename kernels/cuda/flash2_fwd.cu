// FlashAttention-2 forward (Dao, arXiv 2307.08691, Algorithm 1) with the simulator's parameters:
// one CTA per (batch*head, query block of block_m rows), K/V blocks of block_n rows streamed
// through `stages` shared-memory buffers with cp.async, online softmax in fp32, CTA order
// row-major (query blocks of one head consecutive) or head-major. SIMT FMAs, no tensor cores.
#include <cfloat>
#include <cstdio>

#include "kernels/cuda/attention_cuda.h"

namespace attnsim::cuda {

namespace {

struct Flash2Params {
  const __half* q;
  const __half* k;
  const __half* v;
  __half* o;
  int seq_q;
  int seq_kv;
  int bh_count;    // batch * heads
  int q_blocks;    // ceil(seq_q / block_m)
  int row_major;   // 1: cta -> (query block fastest), 0: head-major
  float scale_log2;  // log2(e) / sqrt(head_dim)
};

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_bytes = valid ? 16 : 0;  // 0: zero-fill the 16 bytes
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ float warp_max(float x) {
  for (int off = 16; off > 0; off >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

__device__ __forceinline__ float dot8(const uint4& a, const uint4& b) {
  const __half2* x = reinterpret_cast<const __half2*>(&a);
  const __half2* y = reinterpret_cast<const __half2*>(&b);
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fx = __half22float2(x[i]);
    const float2 fy = __half22float2(y[i]);
    s = fmaf(fx.x, fy.x, s);
    s = fmaf(fx.y, fy.y, s);
  }
  return s;
}

template <int kBlockM, int kBlockN, int kHeadDim, int kStages>
constexpr std::size_t smem_bytes() {
  constexpr int kStride = kHeadDim + 8;
  return sizeof(__half) * (kBlockM + 2 * kStages * kBlockN) * kStride + sizeof(float) * kBlockM * kBlockN;
}

template <int kBlockM, int kBlockN, int kHeadDim, int kWarps, int kStages, bool kCausal>
__global__ void __launch_bounds__(kWarps * 32) flash2_fwd_kernel(Flash2Params p) {
  constexpr int kThreads = kWarps * 32;
  constexpr int kRowsPerWarp = kBlockM / kWarps;
  constexpr int kColsPerLane = kBlockN / 32;
  constexpr int kDimsPerLane = kHeadDim / 32;
  constexpr int kStride = kHeadDim + 8;  // halves per shared-memory row; 16-byte aligned, conflict-free
  constexpr int kChunks = kHeadDim / 8;  // 16-byte chunks per row
  static_assert(kBlockM % kWarps == 0 && kBlockN % 32 == 0 && kHeadDim % 32 == 0, "tile shape");

  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* q_s = reinterpret_cast<__half*>(smem_raw);
  __half* k_s = q_s + kBlockM * kStride;
  __half* v_s = k_s + kStages * kBlockN * kStride;
  float* p_s = reinterpret_cast<float*>(v_s + kStages * kBlockN * kStride);

  const int cta = blockIdx.x;
  const int q_block = p.row_major ? cta % p.q_blocks : cta / p.bh_count;
  const int bh = p.row_major ? cta / p.q_blocks : cta % p.bh_count;
  const int row0 = q_block * kBlockM;
  const __half* qg = p.q + static_cast<std::size_t>(bh) * p.seq_q * kHeadDim;
  const __half* kg = p.k + static_cast<std::size_t>(bh) * p.seq_kv * kHeadDim;
  const __half* vg = p.v + static_cast<std::size_t>(bh) * p.seq_kv * kHeadDim;
  __half* og = p.o + static_cast<std::size_t>(bh) * p.seq_q * kHeadDim;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  for (int i = threadIdx.x; i < kBlockM * kChunks; i += kThreads) {
    const int r = i / kChunks, ch = i % kChunks, row = row0 + r;
    const bool valid = row < p.seq_q;
    cp_async16(q_s + r * kStride + ch * 8, qg + static_cast<std::size_t>(valid ? row : 0) * kHeadDim + ch * 8, valid);
  }
  cp_async_commit();

  const int offset = p.seq_kv - p.seq_q;  // causal mask aligned bottom-right
  int n_blocks = (p.seq_kv + kBlockN - 1) / kBlockN;
  if (kCausal) {
    const int last_row = min(row0 + kBlockM, p.seq_q) - 1;
    const int max_col = last_row + offset;
    n_blocks = max_col < 0 ? 0 : min(n_blocks, max_col / kBlockN + 1);
  }
  auto load_kv = [&](int j, int stage) {
    __half* kt = k_s + stage * kBlockN * kStride;
    __half* vt = v_s + stage * kBlockN * kStride;
    for (int i = threadIdx.x; i < kBlockN * kChunks; i += kThreads) {
      const int r = i / kChunks, ch = i % kChunks, row = j * kBlockN + r;
      const bool valid = row < p.seq_kv;
      const std::size_t src = static_cast<std::size_t>(valid ? row : 0) * kHeadDim + ch * 8;
      cp_async16(kt + r * kStride + ch * 8, kg + src, valid);
      cp_async16(vt + r * kStride + ch * 8, vg + src, valid);
    }
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_blocks) load_kv(s, s);
    cp_async_commit();
  }

  float acc[kRowsPerWarp][kDimsPerLane];
  float m_i[kRowsPerWarp];
  float l_i[kRowsPerWarp];
#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    m_i[rr] = -INFINITY;
    l_i[rr] = 0.f;
#pragma unroll
    for (int d = 0; d < kDimsPerLane; ++d) acc[rr][d] = 0.f;
  }

  for (int j = 0; j < n_blocks; ++j) {
    const int next = j + kStages - 1;
    if (next < n_blocks) load_kv(next, next % kStages);
    cp_async_commit();
    cp_async_wait<kStages - 1>();  // Q and K/V block j have landed
    __syncthreads();
    const __half* kt = k_s + (j % kStages) * kBlockN * kStride;
    const __half* vt = v_s + (j % kStages) * kBlockN * kStride;

#pragma unroll
    for (int rr = 0; rr < kRowsPerWarp; ++rr) {
      const int r = warp * kRowsPerWarp + rr;
      const int row = row0 + r;
      float s[kColsPerLane];
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) s[t] = 0.f;
      for (int ch = 0; ch < kChunks; ++ch) {
        const uint4 qv = *reinterpret_cast<const uint4*>(q_s + r * kStride + ch * 8);
#pragma unroll
        for (int t = 0; t < kColsPerLane; ++t)
          s[t] += dot8(qv, *reinterpret_cast<const uint4*>(kt + (lane + 32 * t) * kStride + ch * 8));
      }
      float mx = -INFINITY;
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) {
        const int col = j * kBlockN + lane + 32 * t;
        const bool masked = col >= p.seq_kv || (kCausal && col > row + offset);
        s[t] = masked ? -INFINITY : s[t] * p.scale_log2;
        mx = fmaxf(mx, s[t]);
      }
      const float m_new = fmaxf(m_i[rr], warp_max(mx));
      const float alpha = m_new == -INFINITY ? 1.f : exp2f(m_i[rr] - m_new);
      float sum = 0.f;
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) {
        const float pv = m_new == -INFINITY ? 0.f : exp2f(s[t] - m_new);
        sum += pv;
        p_s[r * kBlockN + lane + 32 * t] = pv;
      }
      l_i[rr] = l_i[rr] * alpha + warp_sum(sum);
      m_i[rr] = m_new;
#pragma unroll
      for (int d = 0; d < kDimsPerLane; ++d) acc[rr][d] *= alpha;
    }
    __syncwarp();

    for (int c = 0; c < kBlockN; ++c) {
      float vf[kDimsPerLane];
#pragma unroll
      for (int d = 0; d < kDimsPerLane; ++d) vf[d] = __half2float(vt[c * kStride + lane * kDimsPerLane + d]);
#pragma unroll
      for (int rr = 0; rr < kRowsPerWarp; ++rr) {
        const float pc = p_s[(warp * kRowsPerWarp + rr) * kBlockN + c];
#pragma unroll
        for (int d = 0; d < kDimsPerLane; ++d) acc[rr][d] = fmaf(pc, vf[d], acc[rr][d]);
      }
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
  cp_async_wait<0>();

#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int row = row0 + warp * kRowsPerWarp + rr;
    if (row >= p.seq_q) continue;
    const float inv = l_i[rr] > 0.f ? 1.f / l_i[rr] : 0.f;
#pragma unroll
    for (int d = 0; d < kDimsPerLane; ++d)
      og[static_cast<std::size_t>(row) * kHeadDim + lane * kDimsPerLane + d] = __float2half(acc[rr][d] * inv);
  }
}

using KernelFn = void (*)(Flash2Params);

struct Instance {
  int block_m, block_n, warps, stages, head_dim;
  bool causal;
  KernelFn fn;
  std::size_t smem;
};

#define ATTNSIM_FLASH2_PAIR(BM, BN, W, S, HD)                                                          \
  Instance{BM, BN, W, S, HD, false, &flash2_fwd_kernel<BM, BN, HD, W, S, false>, smem_bytes<BM, BN, HD, S>()}, \
      Instance{BM, BN, W, S, HD, true, &flash2_fwd_kernel<BM, BN, HD, W, S, true>, smem_bytes<BM, BN, HD, S>()}
#define ATTNSIM_FLASH2_TILES(HD)                                                                     \
  ATTNSIM_FLASH2_PAIR(64, 64, 4, 2, HD), ATTNSIM_FLASH2_PAIR(128, 64, 4, 2, HD),                      \
      ATTNSIM_FLASH2_PAIR(128, 64, 8, 2, HD), ATTNSIM_FLASH2_PAIR(128, 64, 4, 3, HD),                 \
      ATTNSIM_FLASH2_PAIR(64, 128, 4, 2, HD), ATTNSIM_FLASH2_PAIR(128, 32, 4, 2, HD),                 \
      ATTNSIM_FLASH2_PAIR(64, 64, 4, 1, HD)

const Instance kInstances[] = {ATTNSIM_FLASH2_TILES(64), ATTNSIM_FLASH2_TILES(128)};

}  // namespace

bool launch_flash2(const AttentionShape& s, const Flash2Config& c, const __half* q, const __half* k,
                   const __half* v, __half* o, cudaStream_t stream) {
  for (const Instance& in : kInstances) {
    if (in.block_m != c.block_m || in.block_n != c.block_n || in.warps != c.warps || in.stages != c.stages ||
        in.head_dim != s.head_dim || in.causal != s.causal)
      continue;
    ATTNSIM_CUDA_CHECK(cudaFuncSetAttribute(in.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(in.smem)));
    Flash2Params p;
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    p.seq_q = s.seq_q;
    p.seq_kv = s.seq_kv;
    p.bh_count = s.batch * s.heads;
    p.q_blocks = (s.seq_q + c.block_m - 1) / c.block_m;
    p.row_major = c.cta_order == CtaOrder::kRowMajor ? 1 : 0;
    p.scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(s.head_dim));
    const unsigned grid = static_cast<unsigned>(p.q_blocks) * static_cast<unsigned>(p.bh_count);
    in.fn<<<grid, c.warps * 32, in.smem, stream>>>(p);
    ATTNSIM_CUDA_CHECK(cudaGetLastError());
    return true;
  }
  return false;
}

void list_flash2_configs(std::FILE* out) {
  for (const Instance& in : kInstances) {
    if (in.causal) continue;
    std::fprintf(out, "head_dim=%d block_m=%d block_n=%d warps=%d stages=%d smem=%zu (causal and not)\n",
                 in.head_dim, in.block_m, in.block_n, in.warps, in.stages, in.smem);
  }
}

std::size_t flash2_smem_bytes(const Flash2Config& c, int head_dim) {
  for (const Instance& in : kInstances) {
    if (in.block_m == c.block_m && in.block_n == c.block_n && in.warps == c.warps && in.stages == c.stages &&
        in.head_dim == head_dim)
      return in.smem;
  }
  return 0;
}

}  // namespace attnsim::cuda
