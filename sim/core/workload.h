// A workload: which kernel, on which shapes and tiles. Keys and defaults follow the
// workload contract in docs/cli.md; parsing and validation live in sim/config.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/types.h"

namespace attnsim::core {

enum class Pass : std::uint8_t { kFwd, kFwdBwd };
enum class CtaOrder : std::uint8_t { kRowMajor, kHeadMajor };
// sim.mode: simulate every op (full) or a detected steady state and extrapolate (sampled;
// docs/sampling.md).
enum class SimMode : std::uint8_t { kFull, kSampled };
// sim.min_ops: sampled mode simulates a launch of fewer tile ops in full (docs/sampling.md).
inline constexpr std::uint64_t kDefaultSampledMinOps = std::uint64_t{1} << 17;
// The PyTorch release of the H200 reference measurements (tests/data/reference): `pytorch`'s default.
inline constexpr std::string_view kDefaultPytorch = "2.11";
// Where a paged K/V cache's pages sit in its page pool: in sequence order, or permuted.
enum class PagePlacement : std::uint8_t { kContiguous, kShuffled };
// Functional mode's random inputs: N(0,1) entries, or N(0,1) + N(0,100)·Bernoulli(0.001) (the
// FlashAttention-3 paper's numerical-error experiment: 0.1 % of the entries get an outlier term
// of standard deviation 10).
enum class FunctionalInputs : std::uint8_t { kNormal, kOutliers };
// How functional mode quantizes FP8 (e4m3) inputs: one scale per (batch, head) matrix of Q, K
// and V (FA-3's q/k/v_descale), one per block of block_m rows of Q and block_n rows of K and V
// (the FA-3 paper's block quantization), or none (values rounded as they are).
enum class Fp8Scales : std::uint8_t { kHead, kBlock, kNone };

// The cached key/value tokens of each sequence (flash_decode): all `fixed` (0 = seq_kv), drawn
// uniformly from [min, max] with `seed`, or one per sequence from `list`.
struct KvLengths {
  enum class Kind : std::uint8_t { kFixed, kUniform, kList };
  Kind kind = Kind::kFixed;
  std::uint64_t fixed = 0;
  std::uint64_t min = 0, max = 0, seed = 1;
  std::vector<std::uint64_t> list;
};
// Which implementation of a kernel's algorithm (flash2: the Dao-AILab CUDA kernel or a Triton
// kernel of the Triton tutorial's structure); they compile to different MMA instructions.
enum class KernelImpl : std::uint8_t { kFa2, kTriton };

struct Workload {
  std::string kernel = "flash2";   // standard, flash1, flash2, flash_decode, pointer_chase, stream_read
  std::uint64_t batch = 1;
  std::uint64_t heads = 1;
  std::uint64_t kv_heads = 0;      // 0 = same as heads (resolved by the loader)
  std::uint64_t seq_q = 1024;
  std::uint64_t seq_kv = 1024;
  std::uint64_t head_dim = 64;
  DType dtype = DType::kFp16;
  bool causal = false;
  Pass pass = Pass::kFwd;
  // Tiles and launch shape; 0 = the kernel's own default (resolved per kernel and device).
  std::uint64_t block_m = 0;
  std::uint64_t block_n = 0;
  std::uint64_t block_k = 0;       // GEMM k-tile (standard)
  // standard on compute capability >= 90: run the GEMMs as producer / consumer warp-specialized
  // kernels (TMA producer, two wgmma consumer warp groups; kernels/gemm_ws.cpp). Off by default:
  // on the h200 reference rows it makes the GEMM times 11-21 % too fast (docs/accuracy.md).
  bool gemm_ws = false;
  // standard, forward: q, k, v are views of one packed [batch, seq, 3, heads, head_dim] tensor, as
  // in FlashAttention's benchmark `attention_pytorch` (the FA-3 paper's "standard attention"),
  // whose rearranges copy q and k and whose einsum copies v before the GEMMs read them.
  bool qkv_packed = false;
  // standard: eager code that scales the scores, `(q @ kᵀ) * scale` (nanoGPT) or `/ sqrt(d)`
  // (Hugging Face GPT-2), instead of folding the scale into q: an elementwise multiply over S after
  // QKᵀ, and in the backward its MulBackward over dS before the dQ / dK GEMMs.
  bool scale_kernel = false;
  // standard: the PyTorch release whose eager row-softmax kernels run ("MAJOR.MINOR"; the
  // reference measurements' 2.11 by default; softmax_era).
  std::string pytorch = std::string(kDefaultPytorch);
  std::uint32_t gemm_cluster = 0;  // standard: CTAs per GEMM cluster sharing an operand tile (1, 2); 0 = device's
  std::uint32_t warps = 0;
  std::uint32_t stages = 0;
  CtaOrder cta_order = CtaOrder::kRowMajor;
  KernelImpl impl = KernelImpl::kFa2;  // flash2: fa2 (Dao-AILab CUDA) or triton
  std::uint32_t regs_per_thread = 0;   // 0 = kernel's estimate
  Bytes smem_per_cta = 0;              // 0 = kernel's formula
  std::uint32_t stack_frame_bytes = 0; // flash2 forward: local memory per thread (ptxas "bytes stack frame"); 0 = none
  std::uint64_t num_splits = 0;        // flash_decode; 0 = automatic (resolved flash2: > 1 when it runs FA-2's split-KV pair)
  // flash_decode's K/V cache: tokens per page of the block table (0 = one contiguous
  // [batch, kv_heads, seq_kv, d] cache), the pages' placement in the pool, and the lengths.
  std::uint64_t page_size = 0;
  PagePlacement page_placement = PagePlacement::kContiguous;
  std::uint64_t page_seed = 1;         // kShuffled: the permutation's seed
  KvLengths kv_lengths;                // seq_kv is then the cache capacity (the longest allowed)
  // flash3 (FlashAttention-3's warp-specialized forward): consumer warp groups of 64 query rows
  // each (block_m = 64 x consumer_warpgroups; 0 = from block_m or FA-3's tile heuristic), and
  // its two scheduling knobs, -1 = FA-3's choice for the head dim and dtype, 0 off, 1 on.
  std::uint32_t consumer_warpgroups = 0;
  std::int8_t pingpong = -1;           // named-barrier ping-pong of the consumer warp groups' GEMMs
  std::int8_t intrawg_overlap = -1;    // softmax of block j overlaps the QK^T GEMM of block j+1
  // flash2 impl triton: Q, K, V loaded by TMA tensor descriptors into mbarrier-guarded stage
  // buffers (1: the Triton tutorial's _attn_fwd_tma, sm_90+) or by cp.async copies (0: its
  // block-pointer _attn_fwd, the default for impl triton); -1 = not set.
  std::int8_t tma = -1;
  // flash2 backward tile and warps, resolved from FA-2's launch template (flash_bwd_launch_template.h)
  // for head_dim and the device's per-block shared memory; not workload keys (0 = unresolved:
  // the closed forms then use block_m, block_n).
  std::uint64_t bwd_block_m = 0;
  std::uint64_t bwd_block_n = 0;
  std::uint32_t bwd_warps = 0;
  Bytes sram_bytes = 0;                // flash1: on-chip SRAM M in bytes for Algorithm 1 block sizes; 0 = device's
  bool functional = false;
  std::uint64_t seed = 1;              // functional mode's random inputs
  FunctionalInputs functional_inputs = FunctionalInputs::kNormal;
  Fp8Scales fp8_scales = Fp8Scales::kHead;  // dtype fp8 only
  // Functional mode: Q and K of each (batch, KV head) multiplied by the same random orthogonal
  // matrix (random signs, then a Hadamard transform) before they are stored; head_dim a power of 2.
  bool incoherent_processing = false;
  SimMode sim_mode = SimMode::kFull;   // sim.mode
  std::uint64_t sim_min_ops = kDefaultSampledMinOps;  // sim.min_ops (0: sample every launch that can be)
  // Microbenchmarks.
  Bytes working_set_bytes = 0;     // pointer_chase
  std::uint64_t loads = 0;         // pointer_chase
  std::uint64_t programs = 0;      // stream_read CTAs
  Bytes bytes_per_step = 0;        // stream_read
  Bytes total_bytes = 0;           // stream_read

  Bytes value_bytes() const { return bytes_per_value(dtype); }
  std::uint64_t group_size() const { return kv_heads ? heads / kv_heads : 1; }
};

// A PyTorch release "MAJOR.MINOR" (a patch part is allowed and ignored) as {major, minor}.
std::optional<std::pair<int, int>> parse_pytorch_release(std::string_view s);
// The eager row-softmax dispatch of `w.pytorch` (aten/src/ATen/native/cuda/SoftMax.cu). Rows of
// up to 1024 values (and 4096 B) run one warp per row before 2.7; longer rows run the three-pass
// cunn_SoftMaxForward before 2.4, cunn_SoftMaxForwardSmem with up to 1024 threads and 48 KiB of
// shared memory from 2.4 (pull request 122970; the three-pass kernel where the row does not fit),
// and from 2.7 (pull request 144679) the warp kernel up to 2048 values, cunn_SoftMaxForwardReg up
// to 8192, then the shared-memory kernel. The backward's cunn_SoftMaxBackward reads its gradient
// twice for rows over 1024 values before 2.7 (pull request 145866 staged it in shared memory).
enum class SoftmaxEra : std::uint8_t { kBefore24, k24To26, kFrom27 };
SoftmaxEra softmax_era(const Workload& w);
// The forward's kernel reads each row three times (the three-pass kernel).
bool softmax_three_pass(const Workload& w, std::uint64_t cols, Bytes value_bytes);
// The backward's softmax kernel reads the incoming gradient twice.
bool softmax_backward_rereads(const Workload& w, std::uint64_t cols, Bytes value_bytes);
// 2.4 to 2.6: the row fits cunn_SoftMaxForwardSmem's 48 KiB (sharedMemPerBlock) with its 16-byte
// vectors and the reductions' floats of SoftMaxForward_getBlockSize's warps.
bool softmax_fits_smem_48k(std::uint64_t cols, Bytes value_bytes);

// Every key a workload (YAML, sweep axis, --set) may name besides device.*, listed once:
// the loaders accept these, the kernels' registry entries name theirs from it. "seq" sets
// seq_q and seq_kv.
const std::vector<std::string_view>& workload_keys();

std::string_view to_string(Pass p);
std::string_view to_string(CtaOrder o);
std::string_view to_string(SimMode m);
std::string_view to_string(PagePlacement p);
std::string_view to_string(FunctionalInputs i);
std::string_view to_string(Fp8Scales s);
// The YAML text of kv_lengths as a workload file writes it: `N`, `[a, b, c]`,
// `{uniform: [min, max], seed: s}`; "" for the default (every sequence seq_kv).
std::string to_string(const KvLengths& k);

// The KV length of each of the `batch` sequences: deterministic (the uniform draw is SplitMix64
// from the seed, the same on every platform), each at most seq_kv for a valid workload.
std::vector<std::uint64_t> sequence_kv_lengths(const Workload& w);
// SplitMix64: the generator of kv_lengths' uniform draw and of the shuffled page placement.
std::uint64_t splitmix64(std::uint64_t& state);
std::string_view to_string(KernelImpl i);

// FlashAttention-2's decode path (flash_api.cpp, mha_fwd: "seqlenq_ngroups_swapped"): one query
// token per sequence with more query heads than KV heads (head_dim a multiple of 8) is run with
// the group's query heads as query rows: seq_q = heads / kv_heads rows of each KV head, so one
// CTA reads a K/V block once for the whole group. Applies to the forward of flash2 and
// flash_decode (the callers: the shape condition alone is tested here). The row-major [batch, heads, 1, d] layout of Q and O is then exactly
// [batch, kv_heads, group, d], so the view's addresses are the workload's.
bool packs_query_groups(const Workload& w);
// The workload as the packed kernel sees it (heads = kv_heads, seq_q = group, causal off: with
// one query row causal masks nothing, and FA-2 clears it); `w` unchanged when it does not pack.
// `group_is_row_tile`: the kernel's row tile is the group (flash_decode's split kernel).
Workload packed_query_groups(const Workload& w, bool group_is_row_tile = false);

}  // namespace attnsim::core
