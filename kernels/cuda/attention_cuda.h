// Reference CUDA attention kernels for validating attnsim on silicon: FlashAttention-2 forward
// (flash2_fwd.cu) and the three-kernel textbook baseline (standard_attention.cu). fp16 in/out,
// fp32 accumulation; forward only; no dropout, no GQA (kv_heads = heads).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace attnsim::cuda {

#define ATTNSIM_CUDA_CHECK(expr)                                                              \
  do {                                                                                        \
    cudaError_t err_ = (expr);                                                                \
    if (err_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(err_)); \
      std::exit(3);                                                                           \
    }                                                                                         \
  } while (0)

// Tensors are [batch, heads, seq, head_dim], contiguous, fp16.
struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int seq_q = 1024;
  int seq_kv = 1024;
  int head_dim = 64;
  bool causal = false;  // bottom-right aligned: query i sees keys j <= i + seq_kv - seq_q
};

enum class CtaOrder { kRowMajor, kHeadMajor };

// The simulator's flash2 parameters (workload keys block_m, block_n, warps, stages, cta_order).
struct Flash2Config {
  int block_m = 128;
  int block_n = 64;
  int warps = 4;
  int stages = 2;
  CtaOrder cta_order = CtaOrder::kRowMajor;
};

// Launches flash2_fwd_kernel. Returns false (launching nothing) when the configuration is not
// one of the compiled instances; `list_flash2_configs` prints those.
bool launch_flash2(const AttentionShape& s, const Flash2Config& c, const __half* q, const __half* k,
                   const __half* v, __half* o, cudaStream_t stream);
void list_flash2_configs(std::FILE* out);
// Dynamic shared memory of a configuration (bytes), for reports.
std::size_t flash2_smem_bytes(const Flash2Config& c, int head_dim);

// The baseline: gemm_qk_kernel (S = scale * Q K^T, fp16 to HBM), row_softmax_kernel (S -> P, fp16),
// gemm_pv_kernel (O = P V). `s` and `p` hold batch * heads * seq_q * seq_kv halves each.
void launch_standard(const AttentionShape& s, const __half* q, const __half* k, const __half* v, __half* scores,
                     __half* probs, __half* o, cudaStream_t stream);

}  // namespace attnsim::cuda
