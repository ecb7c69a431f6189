// FlashAttention-2 (arXiv 2307.08691): one CTA per (batch, head, query block), inner loop over
// K/V blocks with an async multi-stage pipeline; backward: Delta preprocessing, one CTA per
// (batch, head, K/V block) recomputing P, dQ accumulated in fp32 (read-modify-write), convert.
#include <algorithm>

#include "kernels/block_sizes.h"
#include "kernels/factories.h"
#include "kernels/kernel_defaults.h"
#include "kernels/tensor_layout.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

namespace {

using core::OpKind;
using core::Tensor;
using core::TileOp;
using L = TensorLayout;

// Operand reads of one GEMM over k from shared memory with the fragments of 16-wide k-slice s+1
// loaded before the MMAs of slice s (FA-2's utils.h gemm; Triton's prefetch of MMAv2 dot
// operands): of `slices` equal reads only the first is exposed; the rest overlap the MMA, which
// completes no earlier than them (async kSharedRead).
void operand_reads_ahead(std::vector<TileOp>& out, Tensor t, std::uint64_t rows, core::Bytes row_bytes,
                         std::uint64_t slices) {
  const std::uint64_t first = std::max<std::uint64_t>(1, rows / std::max<std::uint64_t>(1, slices));
  out.push_back(L::shared(OpKind::kSharedRead, t, std::min(first, rows), row_bytes));
  if (rows > first) {
    TileOp rest = L::shared(OpKind::kSharedRead, t, rows - first, row_bytes);
    rest.async = true;
    out.push_back(rest);
  }
}

core::LaunchShape attention_shape(const core::Workload& w, std::uint64_t grid_x) {
  core::LaunchShape s;
  s.grid_x = grid_x;
  s.grid_y = w.heads;
  s.grid_z = w.batch;
  s.threads_per_cta = w.warps * 32;
  s.regs_per_thread = w.regs_per_thread;
  s.mma_dtype = w.dtype;
  s.smem_dynamic_bytes = w.smem_per_cta;
  return s;
}

// The MMA instruction each implementation compiles to (docs/kernels.md, flash2 `impl`). FA-2's
// CUDA kernel uses warp-level mma.sync (CUTLASS SM80_16x8x16 atoms) on every device. Triton lowers
// tl.dot to warp-group wgmma (MMAv3) on sm_90 when its AccelerateMatmul pass allows it
// (lib/Analysis/Utility.cpp, supportMMA(op, 3)): num_warps a multiple of 4, the dot's M a multiple
// of 64 and N of 8, K at least 16 (fp16), rank 2; otherwise, and before sm_90, mma.sync (MMAv2).
// Both dots of attention (Q Kᵀ: M = block_m, N = block_n, K = d; P V: M = block_m, N = d,
// K = block_n) must qualify for the kernel to use wgmma.
core::MmaFlavour flash2_mma_flavour(const core::Workload& w, const core::DeviceSpec& device) {
  if (w.impl == core::KernelImpl::kFa2 || device.compute_capability < 90 || device.compute_capability >= 100)
    return core::MmaFlavour::kMmaSync;
  const std::uint64_t min_k = w.dtype == core::DType::kFp8 ? 32 : w.dtype == core::DType::kFp32 ? 8 : 16;
  const bool v3 = w.warps % 4 == 0 && w.block_m % 64 == 0 && w.block_n % 8 == 0 && w.head_dim % 8 == 0 &&
                  w.head_dim >= min_k && w.block_n >= min_k;
  return v3 ? core::MmaFlavour::kWgmma : core::MmaFlavour::kMmaSync;
}

core::TileOp flavoured_mma(std::uint64_t m, std::uint64_t n, std::uint64_t k, core::MmaFlavour f) {
  core::TileOp op = TensorLayout::mma(m, n, k);
  op.flavour = f;
  return op;
}

// Warp groups of a Triton CTA on sm_90: with wgmma each warp group of 4 warps owns block_m / G
// consecutive rows of the Q tile (Triton's MMAv3 layout puts the warps along M, 64 rows per warp
// group: warpsPerCTA [num_warps, 1]) and issues its own wgmmas and softmax; nothing couples the
// groups inside a loop step but the CTA-wide barriers of the software pipeline. So a CTA of G > 1
// groups is G op streams that meet at each step's barriers. One group (4 warps, mma.sync, or
// block_m not 64 rows per group) keeps the one stream.
std::uint32_t triton_warp_groups(const core::Workload& w, core::MmaFlavour flavour) {
  if (w.impl != core::KernelImpl::kTriton || flavour != core::MmaFlavour::kWgmma || w.warps % 4 != 0) return 1;
  const std::uint64_t g = w.warps / 4;
  return g > 1 && w.block_m % (64 * g) == 0 ? static_cast<std::uint32_t>(g) : 1;
}

class Flash2Fwd : public core::KernelLaunch {
 public:
  Flash2Fwd(const core::Workload& w, core::MmaFlavour flavour)
      : w_(w), layout_(w), t_r_(core::ceil_div(w.seq_q, w.block_m)), flavour_(flavour),
        groups_(triton_warp_groups(w, flavour)), tma_(w.tma == 1) {}
  std::string name() const override { return "flash2_fwd"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s = attention_shape(w_, t_r_);
    s.stack_frame_bytes = w_.stack_frame_bytes;
    return s;
  }
  std::vector<core::WarpGroupSpec> warp_groups() const override {
    return std::vector<core::WarpGroupSpec>(groups_, core::WarpGroupSpec{core::WarpRole::kAll,
                                                                         static_cast<std::uint32_t>(w_.warps / groups_), 0});
  }
  // With TMA: barrier 0 is Q's, 1 + s the K/V buffer of stage s; one arrival (with the copies'
  // transaction bytes) completes a phase.
  std::vector<std::uint32_t> mbarriers() const override {
    return tma_ ? std::vector<std::uint32_t>(1 + w_.stages, 1) : std::vector<std::uint32_t>{};
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    return emit(cta, 0, step, out);
  }
  bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                       std::vector<TileOp>& out) const override {
    return group < groups_ && emit(cta, group, step, out);
  }
  // The loop steps' shapes, from the predicates emit() branches on: the K/V block's rows, the
  // rows of the block loaded ahead (0: none), whether the block is masked. Unknown for the
  // prologue, the epilogue, the band loop's prologue and the TMA path (whose barrier indices and
  // phases change from step to step).
  std::uint64_t step_shape(std::uint64_t cta, std::uint32_t group, std::uint64_t step) const override {
    const Loop l = loop(cta);
    if (group >= groups_ || tma_ || step == 0 || step > l.blocks) return kUnknownStepShape;
    const std::uint64_t j = step - 1;
    auto rows_of = [&](std::uint64_t b) { return std::min(w_.block_n, w_.seq_kv - b * w_.block_n); };
    std::uint64_t ahead = 0;  // the rows of the block this step loads ahead
    if (w_.stages == 2 && w_.impl == core::KernelImpl::kFa2) {
      ahead = j + 1 < l.blocks ? rows_of(j + 1) : 0;
    } else {
      if (l.band > 0 && j == l.band) return kUnknownStepShape;
      ahead = j + l.pre < l.blocks && (j < l.band) == (j + l.pre < l.band) ? rows_of(j + l.pre) : 0;
    }
    const bool masked = w_.causal && (l.two_loops ? j >= l.band : j + 1 == l.blocks);
    return std::uint64_t{masked} | rows_of(j) << 1 | ahead << 32;
  }

 private:
  // A CTA's loop: its K/V blocks, the blocks loaded ahead, and Triton's causal band (the band's
  // first block; 0: one loop, as every other kernel here).
  struct Loop {
    std::uint64_t blocks = 0, pre = 0, band = 0;
    bool two_loops = false;
  };
  Loop loop(std::uint64_t cta) const {
    const std::uint64_t bhs = w_.batch * w_.heads;
    const std::uint64_t i = w_.cta_order == core::CtaOrder::kRowMajor ? cta % t_r_ : cta / bhs;
    const std::uint64_t cta_row0 = i * w_.block_m, cta_r = std::min(w_.block_m, w_.seq_q - cta_row0);
    Loop l;
    l.blocks = w_.causal ? KernelDefaults::causal_col_blocks(cta_row0, cta_r, w_.seq_kv - w_.seq_q, w_.seq_kv, w_.block_n)
                         : core::ceil_div(w_.seq_kv, w_.block_n);
    l.pre = w_.stages > 1 ? w_.stages - 1 : 0;
    // Triton's causal kernel (the tutorial's _attn_fwd, STAGE 3, read at dc6ee3e) runs the key
    // blocks left of the diagonal band and then the band as two loops (_attn_fwd_inner with STAGE 1,
    // then 2, which masks every block), each software-pipelined on its own (cp.async path below).
    l.two_loops = w_.causal && w_.impl == core::KernelImpl::kTriton && !tma_;
    l.band = l.two_loops ? std::min(l.blocks, (cta_row0 + (w_.seq_kv - w_.seq_q)) / w_.block_n) : 0;
    return l;
  }

  // The ops of warp group `group` (of groups_) at loop step `step`: its rows of the tile, its share
  // of the K/V loads (each thread of the CTA copies a part of every block), the CTA's barriers.
  bool emit(std::uint64_t cta, std::uint32_t group, std::uint64_t step, std::vector<TileOp>& out) const {
    const std::uint64_t bhs = w_.batch * w_.heads;
    const bool row_major = w_.cta_order == core::CtaOrder::kRowMajor;
    const std::uint64_t i = row_major ? cta % t_r_ : cta / bhs;
    const std::uint64_t bh = row_major ? cta / t_r_ : cta % bhs;
    const std::uint64_t cta_row0 = i * w_.block_m, cta_r = std::min(w_.block_m, w_.seq_q - cta_row0);
    const Loop l = loop(cta);
    const std::uint64_t blocks = l.blocks, pre = l.pre, band = l.band;
    const bool two_loops = l.two_loops;
    // This group's rows (all of them with one group); a group past the valid rows still computes
    // its whole tile and meets the barriers, but loads and stores nothing of Q and O.
    const std::uint64_t m = w_.block_m / groups_, row0 = cta_row0 + group * m;
    const std::uint64_t r = cta_r > group * m ? std::min(m, cta_r - group * m) : 0;
    const std::uint64_t d = w_.head_dim;
    auto kv_block = [&](std::uint64_t j) {  // this group's share of K_j and V_j
      const std::uint64_t c = std::min(w_.block_n, w_.seq_kv - j * w_.block_n);
      const std::uint64_t share = core::ceil_div(c, std::uint64_t{groups_}), first = std::min(c, group * share);
      const std::uint64_t rows = std::min(share, c - first);
      if (rows == 0) return;
      out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, j * w_.block_n + first, rows, true));
      out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh, j * w_.block_n + first, rows, true));
    };
    auto rows_of = [&](std::uint64_t j) { return std::min(w_.block_n, w_.seq_kv - j * w_.block_n); };
    // Operands through registers (mma.sync + ldmatrix, FA-2's Flash_fwd_kernel_traits with
    // Is_Q_in_regs = false): the warps split the block_m rows, so every warp reads all of K_j
    // and V_j from shared memory, and the Q tile is re-read each step; the tensor-core work and
    // the softmax cover the whole block_m-row tile even when fewer rows are valid (decode).
    // kernels.csv's l1tex__data_pipe_lsu_wavefronts_mem_shared agrees within 5 % on all nine
    // flash_fwd_kernel rows (docs/accuracy.md).
    // With wgmma (Triton on sm_90) the operands are read from shared memory by the tensor cores,
    // once per warp group (4 warps) instead of once per warp; P stays in registers (wgmma's A
    // operand from registers).
    const std::uint64_t warps = std::max<std::uint64_t>(1, w_.warps / groups_);  // this group's
    const std::uint64_t readers = flavour_ == core::MmaFlavour::kWgmma ? std::max<std::uint64_t>(1, warps / 4) : warps;
    const core::Bytes row_bytes = d * w_.value_bytes();
    auto mma = [&](std::uint64_t mm, std::uint64_t nn, std::uint64_t kk) {
      return flavoured_mma(mm, nn, kk, flavour_);
    };
    // Operand reads of one GEMM over k, k-slice by k-slice (operand_reads_ahead): with mma.sync
    // loaded ahead by ldmatrix; with wgmma read by the tensor cores themselves, one k16 slice per
    // instruction of the GEMM's chain of async wgmmas, the next one's while the last one computes.
    // Each ldmatrix.x4 (SM75_U32x4_LDSM_N; .trans for V) moves 16 B per thread: one issue slot per
    // 16 B read (thread instructions, as kIssue counts them).
    auto operand_reads = [&](Tensor t, std::uint64_t rows, std::uint64_t k) {
      const bool sync_mma = flavour_ == core::MmaFlavour::kMmaSync;
      if (sync_mma) out.push_back(L::count_op(OpKind::kIssue, rows * row_bytes / 16));
      operand_reads_ahead(out, t, rows, row_bytes, k / 16);
    };
    // FP32-pipe and MUFU thread instructions of FA-2's softmax (softmax.h, softmax_rescale_o; the
    // mma.sync accumulator layout gives each row of a warp's tile to a quad of 4 threads). Per
    // score element: FMNMX (reduce_max), FFMA (x·scale − max·scale), MUFU.EX2 (exp2f under
    // --use_fast_math), FADD (reduce_sum), half an F2FP (P to fp16, two values per instruction).
    // Per output element: FMUL (acc_o *= scores_scale). Per row and thread of its quad: 2 SHFL and
    // 2 FMNMX (quad allreduce of the max), FADD and FMUL and MUFU.EX2 (scores_scale), FMUL
    // (row_sum), FSETP, FSEL, FMUL (the max scaled, −inf guarded). Causal: ISETP and FSEL per
    // element of the diagonal block (apply_mask_causal).
    constexpr std::uint64_t kQuad = 4, kPerRowThread = 9;
    auto scores = [&](std::uint64_t j) {  // S = Q K_jᵀ and its mask
      const std::uint64_t c = rows_of(j);
      operand_reads(Tensor::kQ, m, d);
      operand_reads(Tensor::kK, readers * c, d);
      out.push_back(mma(m, c, d));
      if (w_.causal && (two_loops ? j >= band : j + 1 == blocks))
        out.push_back(L::count_op(OpKind::kElementwise, 2 * m * c));
    };
    auto softmax_pv = [&](std::uint64_t j) {  // online softmax (max, exp, sum, rescale O), O += P V_j
      const std::uint64_t c = rows_of(j);
      out.push_back(L::count_op(OpKind::kElementwise, 7 * m * c / 2 + m * d + kQuad * kPerRowThread * m));
      out.push_back(L::count_op(OpKind::kExp, m * c + kQuad * m));
      operand_reads(Tensor::kV, readers * c, c);
      out.push_back(mma(m, d, c));
    };
    if (step == 0 && w_.stack_frame_bytes != 0 && group == 0) {  // group 0 writes every warp's frame
      // Register spills: every thread writes its stack frame to local memory once (for FA-2's
      // d = 128 kernel ptxas reports 172 B of spill stores into a 112 B frame); the engine moves
      // this CTA's frames to its resident slot's copy. Spill reloads are left out (L1 hits).
      const std::uint64_t frames = w_.stack_frame_bytes * w_.warps * 32;  // one row of bytes
      out.push_back(L::tile(OpKind::kStore, Tensor::kLocal, 0, 1, frames, 1, 0, 1, 0, frames));
    }
    if (w_.stages == 2 && w_.impl == core::KernelImpl::kFa2) {
      // FA-2's own schedule with one K and one V buffer (the measured 64 KiB = Q + K + V tiles;
      // flash_fwd_kernel.h, compute_attn_1rowblock): the prologue loads Q and K_0; step j waits,
      // issues V_j, computes S_j, waits for V_j, issues K_{j+1} into the freed K buffer, then runs
      // the softmax and P V_j. Each load overlaps one of the two GEMMs.
      if (step == 0) {
        out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, row0, r, true));
        out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, 0, rows_of(0), true));
        out.push_back(L::simple(OpKind::kCommit));
        return true;
      }
      if (step <= blocks) {
        const std::uint64_t j = step - 1;
        out.push_back(L::count_op(OpKind::kWait, 0));
        out.push_back(L::simple(OpKind::kBarrier));
        out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh, j * w_.block_n, rows_of(j), true));
        out.push_back(L::simple(OpKind::kCommit));
        scores(j);
        out.push_back(L::count_op(OpKind::kWait, 0));
        out.push_back(L::simple(OpKind::kBarrier));
        if (j + 1 < blocks) {
          out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, (j + 1) * w_.block_n, rows_of(j + 1), true));
          out.push_back(L::simple(OpKind::kCommit));
        }
        softmax_pv(j);
        return true;
      }
    } else if (tma_) {
      // Triton's TMA path (the tutorial's _attn_fwd_tma: tensor-descriptor loads, which its
      // software pipeliner turns into TMA copies into a ring of num_stages buffers, each with an
      // mbarrier expecting the copies' bytes). One thread issues each copy (group 0 here): the
      // whole Q tile, then K_j and V_j `stages` - 1 blocks ahead of the one being computed; every
      // group waits on the buffer's barrier. The copies are not under the load credits. The CTA
      // barrier that ends a step keeps a buffer from being refilled before every group read it.
      auto tma_block = [&](std::uint64_t j) {
        const std::uint64_t c = rows_of(j);
        const auto bar = static_cast<std::uint8_t>(1 + j % w_.stages);
        const TileOp k = L::bulk(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, j * w_.block_n, c, true), bar);
        const TileOp v = L::bulk(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh, j * w_.block_n, c, true), bar);
        out.push_back(L::barrier_op(OpKind::kMbarArrive, bar, 1, static_cast<std::uint32_t>(k.bytes() + v.bytes())));
        out.push_back(k);
        out.push_back(v);
      };
      if (step == 0) {
        if (group == 0) {
          const TileOp q = L::bulk(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, cta_row0, cta_r, true), 0);
          out.push_back(L::barrier_op(OpKind::kMbarArrive, 0, 1, static_cast<std::uint32_t>(q.bytes())));
          out.push_back(q);
          for (std::uint64_t j = 0; j < std::min(pre, blocks); ++j) tma_block(j);
        }
        out.push_back(L::barrier_op(OpKind::kMbarWait, 0, 0));
        return true;
      }
      if (step <= blocks) {
        const std::uint64_t j = step - 1;
        if (group == 0 && j + pre < blocks) tma_block(j + pre);
        out.push_back(L::barrier_op(OpKind::kMbarWait, static_cast<std::uint8_t>(1 + j % w_.stages), j / w_.stages));
        scores(j);
        softmax_pv(j);
        out.push_back(L::simple(OpKind::kBarrier));
        return true;
      }
    } else {
      // `stages` - 1 K/V blocks in flight ahead of the one being computed (cp.async groups; Triton's
      // software pipeliner with num_stages = stages), within one loop: with Triton's two causal
      // loops the first does not load the band's blocks ahead, and the band starts with its own
      // prologue, its first block waited for with nothing to overlap.
      auto same_loop = [&](std::uint64_t a, std::uint64_t b) { return (a < band) == (b < band); };
      if (step == 0) {
        if (r > 0) out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, row0, r, true));
        for (std::uint64_t j = 0; j < pre; ++j) {  // empty groups past the last block keep wait(pre) exact
          if (j < blocks && same_loop(0, j)) kv_block(j);
          out.push_back(L::simple(OpKind::kCommit));
        }
        return true;
      }
      if (step <= blocks) {
        const std::uint64_t j = step - 1;
        if (band > 0 && j == band)  // the band loop's prologue
          for (std::uint64_t k = j; k < j + pre; ++k) {
            if (k < blocks) kv_block(k);
            out.push_back(L::simple(OpKind::kCommit));
          }
        if (j + pre < blocks && same_loop(j, j + pre)) kv_block(j + pre);
        out.push_back(L::simple(OpKind::kCommit));
        out.push_back(L::count_op(OpKind::kWait, pre));
        out.push_back(L::simple(OpKind::kBarrier));
        scores(j);
        softmax_pv(j);
        out.push_back(L::simple(OpKind::kBarrier));
        return true;
      }
    }
    if (step == blocks + 1) {
      // normalize_softmax_lse: FMUL per output element, then its conversion to fp16 (F2FP, two per
      // instruction).
      out.push_back(L::count_op(OpKind::kElementwise, r * d + r * d / 2));
      // Epilogue: O is staged through shared memory (whole tile) for coalesced stores.
      out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kO, m, d * w_.value_bytes()));
      out.push_back(L::shared(OpKind::kSharedRead, Tensor::kO, m, d * w_.value_bytes()));
      if (r > 0) {
        out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kO, bh, row0, r));
        // The fp32 LSE of every row, forward-only runs too: FA-2's compute_attn_1rowblock writes
        // gLSE unconditionally (mha_fwd returns softmax_lse), the Triton tutorial's _attn_fwd
        // stores M.
        out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kLse, bh, row0, r));
      }
      return true;
    }
    return false;
  }

  core::Workload w_;
  TensorLayout layout_;
  std::uint64_t t_r_;
  core::MmaFlavour flavour_;
  std::uint32_t groups_;  // warp groups per CTA (triton_warp_groups)
  bool tma_;              // impl triton: loads by TMA (Workload::tma)
};

// Per query block: Delta = rowsum(dO ∘ O); zero the fp32 dQ accumulator.
// The backward launches run on the backward's tile: block_m, block_n, warps replaced by the
// resolved bwd_block_m, bwd_block_n, bwd_warps (FA-2's Flash_bwd_kernel_traits).
core::Workload backward_view(const core::Workload& w) {
  core::Workload b = w;
  b.block_m = w.bwd_block_m;
  b.block_n = w.bwd_block_n;
  b.warps = w.bwd_warps;
  return b;
}

class Flash2BwdPreprocess : public core::KernelLaunch {
 public:
  explicit Flash2BwdPreprocess(const core::Workload& w) : w_(w), layout_(w), t_r_(core::ceil_div(w.seq_q, w.block_m)) {}
  std::string name() const override { return "flash2_bwd_preprocess"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s = attention_shape(w_, t_r_);
    s.regs_per_thread = 32;
    s.smem_dynamic_bytes = 0;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t bh = cta / t_r_, row0 = (cta % t_r_) * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
    out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kDO, bh, row0, r));
    out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kO, bh, row0, r));
    out.push_back(L::count_op(OpKind::kElementwise, 2 * r * w_.head_dim));
    out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kDelta, bh, row0, r));
    out.push_back(layout_.acc_rows(OpKind::kStore, Tensor::kDQAccum, bh, row0, r));
    return true;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  std::uint64_t t_r_;
};

// FA-2's backward tile (flash_bwd_launch_template.h, run_mha_bwd_hdim*: Flash_bwd_kernel_traits
// <d, kBlockM, kBlockN, 8 warps, ..., Is_V_in_regs, No_double_buffer> without dropout), chosen by
// head_dim and the per-block shared memory (cudaDevAttrMaxSharedMemoryPerBlockOptin);
// independent of the forward's tile.
// atom_*: the warps along the first (M) dimension of the S/dP, dK/dV and dQ GEMMs
// (AtomLayoutMSdP, AtomLayoutNdKV, AtomLayoutMdQ); the rest of the 8 warps split N.
struct BwdTraits {
  std::uint64_t block_m = 64, block_n = 64;
  bool v_in_regs = false, double_buffer = true;
  std::uint64_t atom_sdp = 4, atom_dkv = 2, atom_dq = 2;
};

BwdTraits fa2_bwd_traits(std::uint64_t d, core::Bytes optin) {
  constexpr core::Bytes kib = 1024;
  BwdTraits t;
  if (d <= 32) {
    t.block_m = t.block_n = 128, t.v_in_regs = true, t.atom_sdp = t.atom_dkv = t.atom_dq = 4;
  } else if (d <= 64) {
    if (optin >= 144 * kib) t.block_m = t.block_n = 128, t.atom_sdp = t.atom_dkv = t.atom_dq = 4;
    else t.block_n = 128, t.v_in_regs = true, t.atom_sdp = 2, t.atom_dkv = t.atom_dq = 4;
  } else if (d <= 96) {
    t.block_n = 128, t.v_in_regs = true, t.atom_sdp = 2, t.atom_dkv = t.atom_dq = 4;
  } else if (d <= 128) {
    if (optin >= 144 * kib) t.block_n = 128, t.atom_sdp = 2, t.atom_dkv = 4, t.atom_dq = 2;
    else t.v_in_regs = true;  // 64 x 64, atoms 4, 2, 2
  } else if (d <= 192) {
    t.v_in_regs = optin < 136 * kib, t.double_buffer = optin >= 136 * kib;
  } else {
    t.block_n = optin >= 144 * kib ? 64 : 32;
    t.double_buffer = optin >= 176 * kib;
    t.v_in_regs = optin < 144 * kib;
    if (t.block_n == 32) t.atom_dkv = 1;
  }
  return t;
}

// Shared memory of the backward CTA: FA-2's Kernel_traits::kSmemSize1colblock. Q double-buffered
// and dO (3·block_m·d; 2·block_m·d without double buffering), K and V (2·block_n·d), dS and P
// (2·block_m·block_n), in the workload dtype; with V in registers K, V share with dS, P:
// max(2·block_n·d, block_n·d + 2·block_m·block_n).
core::Bytes fa2_bwd_smem(const BwdTraits& t, std::uint64_t d, core::Bytes v) {
  const core::Bytes m = t.block_m, n = t.block_n;
  const core::Bytes qdo = (t.double_buffer ? 3 : 2) * m * d * v, kv = 2 * n * d * v, ds_p = 2 * m * n * v;
  return qdo + (t.v_in_regs ? std::max(kv, kv / 2 + ds_p) : kv + ds_p);
}

// FA-2's tile for the device, or, on a device smaller than any FA-2 supports (less than ~96 KiB
// per block, e.g. the teaching preset), the tile halved (its larger side first) until it fits.
BwdTraits fitting_bwd_traits(std::uint64_t d, core::Bytes v, core::Bytes optin) {
  BwdTraits t = fa2_bwd_traits(d, optin);
  while (fa2_bwd_smem(t, d, v) > optin && std::max(t.block_m, t.block_n) > 16) {
    if (t.block_n >= t.block_m) t.block_n /= 2;
    else t.block_m /= 2;
  }
  return t;
}

// One CTA per (batch, head, K/V block): K_j, V_j stay on chip; the query blocks that see the
// block stream through; dK_j, dV_j written once (per query head); dQ += via fp32 accumulator.
class Flash2Bwd : public core::KernelLaunch {
 public:
  Flash2Bwd(const core::Workload& w, BwdTraits t, std::uint32_t regs_per_block)
      : w_(w), layout_(w), t_c_(core::ceil_div(w.seq_kv, w.block_n)), t_(t),
        smem_(fa2_bwd_smem(t, w.head_dim, w.value_bytes())), device_regs_per_block_(regs_per_block) {}
  std::string name() const override { return "flash2_bwd"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s = attention_shape(w_, t_c_);
    s.smem_dynamic_bytes = smem_;
    // The forward's register count (measured launches: 255), capped so the 8-warp CTA fits the
    // per-block register file (in steps of 8).
    const std::uint32_t cap = device_regs_per_block_ / std::max<std::uint32_t>(1, s.threads_per_cta) / 8 * 8;
    s.regs_per_thread = std::min(s.regs_per_thread, std::max<std::uint32_t>(8, cap));
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    const std::uint64_t bh = cta / t_c_, j = cta % t_c_;
    const std::uint64_t col0 = j * w_.block_n, c = std::min(w_.block_n, w_.seq_kv - col0);
    const std::uint64_t first = w_.causal ? KernelDefaults::causal_first_row(col0, w_.seq_kv - w_.seq_q, w_.block_m) / w_.block_m : 0;
    const std::uint64_t t_r = core::ceil_div(w_.seq_q, w_.block_m), d = w_.head_dim;
    const std::uint64_t n = t_r - first;
    // FA-2's loop (flash_bwd_kernel.h, compute_dq_dk_dv_1colblock, read at Dao-AILab/flash-attention
    // 0251105a): the prologue loads K_j, V_j and the first query block's Q, dO (and its LSE,
    // Delta); each iteration waits for its block, and issues the next block's loads while it
    // computes: Q into the second Q buffer after S and dP (Double_buffer; else after dK), dO after
    // the dV GEMM has read the single dO buffer, and with it LSE and Delta (register loads FA-2
    // issues after dQ, first used in the next iteration).
    auto block_rows = [&](std::uint64_t i) { return std::min(w_.block_m, w_.seq_q - i * w_.block_m); };
    auto load_q = [&](std::uint64_t i) {
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, i * w_.block_m, block_rows(i), true));
    };
    auto load_do_stats = [&](std::uint64_t i) {
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kDO, bh, i * w_.block_m, block_rows(i), true));
      for (Tensor t : {Tensor::kLse, Tensor::kDelta}) {
        TileOp op = layout_.stat_rows(OpKind::kLoad, t, bh, i * w_.block_m, block_rows(i));
        op.async = true;  // register loads first used in the next iteration
        out.push_back(op);
      }
    };
    if (step == 0) {
      out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, col0, c, true));
      out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh, col0, c, true));
      if (n > 0) {
        load_q(first);
        load_do_stats(first);
      }
      out.push_back(L::simple(OpKind::kCommit));
      return true;
    }
    if (step <= n) {
      const std::uint64_t i = first + step - 1, row0 = i * w_.block_m, r = block_rows(i);
      const bool next = step < n;
      out.push_back(L::count_op(OpKind::kWait, 0));
      out.push_back(L::simple(OpKind::kBarrier));
      // Operands from shared memory (mma.sync + ldmatrix, flash_bwd_kernel.h
      // compute_dq_dk_dv_1colblock): in a GEMM whose warps form an a × (warps/a) grid, each warp
      // reads its rows of A and its columns of B, so A is read warps/a times, B a times. P and
      // dS go through shared memory (written once, read by the dV, dK and dQ GEMMs); V stays in
      // registers when the traits say so. As in the forward (utils.h gemm), the fragments are
      // loaded ahead, k-slice by k-slice (operand_reads_ahead), by ldmatrix.x4 (SM75_U32x4_LDSM_N
      // and .trans): one issue slot per 16 B read.
      const std::uint64_t wp = std::max<std::uint64_t>(1, w_.warps), v = w_.value_bytes();
      auto mma = [&](std::uint64_t mm, std::uint64_t nn, std::uint64_t kk) {  // FA-2's backward: mma.sync
        return flavoured_mma(mm, nn, kk, core::MmaFlavour::kMmaSync);
      };
      auto gemm_reads = [&](Tensor a, std::uint64_t a_rows, std::uint64_t a_row_bytes, Tensor b, std::uint64_t b_rows,
                            std::uint64_t b_row_bytes, std::uint64_t atom, bool b_in_regs, std::uint64_t k) {
        out.push_back(L::count_op(OpKind::kIssue, ((wp / atom) * a_rows * a_row_bytes +
                                                   (b_in_regs ? 0 : atom * b_rows * b_row_bytes)) / 16));
        operand_reads_ahead(out, a, (wp / atom) * a_rows, a_row_bytes, k / 16);
        if (!b_in_regs) operand_reads_ahead(out, b, atom * b_rows, b_row_bytes, k / 16);
      };
      gemm_reads(Tensor::kQ, r, d * v, Tensor::kK, c, d * v, t_.atom_sdp, false, d);
      out.push_back(mma(r, c, d));                      // S = Q K_jᵀ
      gemm_reads(Tensor::kDO, r, d * v, Tensor::kV, c, d * v, t_.atom_sdp, t_.v_in_regs, d);
      out.push_back(mma(r, c, d));                      // dP = dO V_jᵀ
      out.push_back(L::count_op(OpKind::kExp, r * c));     // P = exp(S - LSE)
      out.push_back(L::count_op(OpKind::kElementwise, 3 * r * c));  // dS = P ∘ (dP - Delta)
      if (next && t_.double_buffer) {
        load_q(i + 1);
        out.push_back(L::simple(OpKind::kCommit));
      }
      out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kP, r, c * v));
      out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kDS, r, c * v));
      out.push_back(L::simple(OpKind::kBarrier));
      gemm_reads(Tensor::kP, c, r * v, Tensor::kDO, r, d * v, t_.atom_dkv, false, r);
      out.push_back(mma(c, d, r));                      // dV_j += Pᵀ dO
      out.push_back(L::simple(OpKind::kBarrier));       // dV has read sdO: the next dO may land
      if (next) {
        load_do_stats(i + 1);
        out.push_back(L::simple(OpKind::kCommit));
      }
      gemm_reads(Tensor::kDS, r, c * v, Tensor::kK, c, d * v, t_.atom_dq, false, c);
      out.push_back(mma(r, d, c));                      // dQ_i (partial) = dS K_j
      // dQ_accum += dS K_j by atomicAdd (FA-2's seqk-parallel backward, flash_bwd_kernel.h): a
      // reduction performed at the L2, one request per value; modelled as a store of the fp32
      // tile (no load through the SM: the L2 slice reads the old value itself).
      out.push_back(layout_.acc_rows(OpKind::kStore, Tensor::kDQAccum, bh, row0, r));
      gemm_reads(Tensor::kDS, c, r * v, Tensor::kQ, r, d * v, t_.atom_dkv, false, r);
      out.push_back(mma(c, d, r));                      // dK_j += dSᵀ Q
      if (next && !t_.double_buffer) {
        out.push_back(L::simple(OpKind::kBarrier));
        load_q(i + 1);
        out.push_back(L::simple(OpKind::kCommit));
      }
      return true;
    }
    if (step == n + 1) {
      out.push_back(layout_.grad_kv_rows(OpKind::kStore, Tensor::kDK, bh, col0, c));
      out.push_back(layout_.grad_kv_rows(OpKind::kStore, Tensor::kDV, bh, col0, c));
      return true;
    }
    return false;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  std::uint64_t t_c_;
  BwdTraits t_;
  core::Bytes smem_;
  std::uint32_t device_regs_per_block_;
};

class Flash2ConvertDq : public core::KernelLaunch {
 public:
  explicit Flash2ConvertDq(const core::Workload& w) : w_(w), layout_(w), t_r_(core::ceil_div(w.seq_q, w.block_m)) {}
  std::string name() const override { return "flash2_bwd_convert_dq"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s = attention_shape(w_, t_r_);
    s.regs_per_thread = 32;
    s.smem_dynamic_bytes = 0;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t bh = cta / t_r_, row0 = (cta % t_r_) * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
    out.push_back(layout_.acc_rows(OpKind::kLoad, Tensor::kDQAccum, bh, row0, r));
    out.push_back(L::count_op(OpKind::kElementwise, r * w_.head_dim));
    out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kDQ, bh, row0, r));
    return true;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  std::uint64_t t_r_;
};

// GQA / MQA backward: FA-2's mha_bwd (flash_api.cpp) gives the kernel per-query-head dK and dV
// buffers (dk_expanded, dv_expanded) and then sums each over the group with at::sum_out, one
// PyTorch reduction kernel per tensor: every expanded value read once, every KV head's value
// written once. Modelled as 128-thread CTAs of ceil(1024 / d) rows per KV head (the elementwise
// launches' convention), one FP32 add per value read; the sum lands on the group's first head's
// rows (the bytes of a separate dK are the same).
class Flash2BwdGroupSum : public core::KernelLaunch {
 public:
  Flash2BwdGroupSum(const core::Workload& w, Tensor t)
      : w_(w), layout_(w), t_(t), rows_(core::ceil_div(1024, w.head_dim)),
        per_head_(core::ceil_div(w.seq_kv, rows_)), group_(w.heads / w.kv_heads) {}
  std::string name() const override { return t_ == Tensor::kDK ? "flash2_bwd_sum_dk" : "flash2_bwd_sum_dv"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = per_head_;
    s.grid_y = w_.kv_heads;
    s.grid_z = w_.batch;
    s.threads_per_cta = 128;
    s.regs_per_thread = 32;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t bg = cta / per_head_, row0 = (cta % per_head_) * rows_;
    const std::uint64_t r = std::min(rows_, w_.seq_kv - row0);
    const std::uint64_t b = bg / w_.kv_heads, first = b * w_.heads + (bg % w_.kv_heads) * group_;
    for (std::uint64_t h = first; h < first + group_; ++h) out.push_back(layout_.grad_kv_rows(OpKind::kLoad, t_, h, row0, r));
    out.push_back(L::count_op(OpKind::kElementwise, group_ * r * w_.head_dim));
    out.push_back(layout_.grad_kv_rows(OpKind::kStore, t_, first, row0, r));
    return true;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  Tensor t_;
  std::uint64_t rows_, per_head_, group_;
};

void resolve_backward(core::Workload& w, const core::DeviceSpec& device) {
  const BwdTraits t = fitting_bwd_traits(w.head_dim, w.value_bytes(), KernelDefaults::smem_limit(device));
  w.bwd_block_m = t.block_m;
  w.bwd_block_n = t.block_n;
  w.bwd_warps = 8;
  KernelDefaults::check_smem(fa2_bwd_smem(t, w.head_dim, w.value_bytes()), device, "head_dim",
                             "flash2 backward tiles " + std::to_string(t.block_m) + "x" + std::to_string(t.block_n));
}

core::Workload resolve(const core::Workload& in, const core::DeviceSpec& device) {
  core::Workload w = KernelDefaults::validate_shape(in);
  const Flash2Blocks defaults = w.impl == core::KernelImpl::kTriton
                                    ? triton_default_blocks(w.head_dim)
                                    : flash2_default_blocks(w.head_dim, device.sm.shared_mem_per_block_optin_bytes,
                                                            device.sm.shared_mem_per_sm_bytes, w.value_bytes());
  if (w.block_m == 0) w.block_m = defaults.b_r;
  if (w.block_n == 0) w.block_n = defaults.b_c;
  if (w.warps == 0) w.warps = defaults.warps;
  if (w.stages == 0) w.stages = defaults.stages;
  auto tile_bytes = [&](std::uint64_t bm, std::uint64_t bn) {
    return (bm + 2 * bn * std::max<std::uint64_t>(1, w.stages - 1)) * w.head_dim * w.value_bytes();
  };
  if (in.smem_per_cta == 0)  // a device smaller than the library's tile: halve the tile it chose
    KernelDefaults::shrink_to_fit(w.block_m, w.block_n, in.block_m == 0, in.block_n == 0, tile_bytes, device);
  const core::Bytes tiles = tile_bytes(w.block_m, w.block_n);
  const std::string what = "flash2 tiles " + std::to_string(w.block_m) + "x" + std::to_string(w.block_n) +
                           " (head_dim " + std::to_string(w.head_dim) + ", " + std::to_string(w.stages) + " stages)";
  if (w.smem_per_cta == 0) {
    // Blame the block whose tiles take most of the space: Q's block_m rows, or the staged K and V
    // tiles of block_n rows each.
    const bool kv_larger = 2 * w.block_n * std::max<std::uint64_t>(1, w.stages - 1) > w.block_m;
    KernelDefaults::check_smem(tiles, device, kv_larger ? "block_n" : "block_m", what);
    w.smem_per_cta = tiles;
  }
  KernelDefaults::check_smem(w.smem_per_cta, device, "smem_per_cta", what);
  if (w.pass == core::Pass::kFwdBwd) resolve_backward(w, device);
  // impl triton: the tutorial's block-pointer kernel (cp.async) unless `tma` asks for its
  // tensor-descriptor kernel, which needs TMA (compute capability 9.0 or later; docs/kernels.md
  // says why cp.async stays the default); FA-2's CUDA kernel always copies with cp.async.
  if (w.impl == core::KernelImpl::kTriton && w.tma < 0) w.tma = 0;
  if (w.tma == 1 && w.impl != core::KernelImpl::kTriton)
    throw core::ConfigError(core::ConfigProblem{
        "", 0, "tma", "FA-2's CUDA kernel (impl: fa2) copies K and V with cp.async; TMA loads are impl: triton's"});
  if (w.tma == 1 && !KernelDefaults::has_tma(device))
    throw core::ConfigError(core::ConfigProblem{
        "", 0, "tma",
        "needs a GPU with TMA (compute capability 9.0 or later); device '" + device.name + "' " +
            (device.kind == core::DeviceKind::kGpu
                 ? "has " + std::to_string(device.compute_capability / 10) + "." +
                       std::to_string(device.compute_capability % 10)
                 : std::string("is a scratchpad accelerator"))});
  if (w.regs_per_thread == 0)
    w.regs_per_thread = KernelDefaults::attention_regs(w.block_m, w.block_n, w.head_dim, w.warps * 32, device);
  return w;
}

}  // namespace

core::TileProgram make_flash2(const core::Workload& workload, const core::DeviceSpec& device) {
  core::TileProgram p;
  p.workload = resolve(workload, device);
  p.workload.num_splits = 0;  // not a flash2 key: > 1 only where the split-KV pair below runs
  // One query token, FA-2's CUDA kernel on a GPU, forward: FA-2's mha_fwd (flash_api.cpp) sets
  // num_splits with num_splits_heuristic on the (packed) shape and runs the split-KV kernel and
  // its combine kernel when that picks more than one split, flash_fwd_kernel otherwise. The split
  // pair is flash_decode's program with FA-2's split-kernel traits: flash2's tile keys describe
  // flash_fwd_kernel and do not apply to it (docs/kernels.md, flash2).
  if (p.workload.impl == core::KernelImpl::kFa2 && p.workload.pass == core::Pass::kFwd && p.workload.seq_q == 1 &&
      device.kind == core::DeviceKind::kGpu) {
    core::Workload d = workload;
    d.kernel = "flash_decode";
    d.block_m = d.block_n = d.warps = d.stages = 0;
    d.regs_per_thread = 0;
    d.smem_per_cta = d.stack_frame_bytes = 0;
    d.num_splits = 0;
    d.tma = -1;
    core::TileProgram split = make_flash_decode(d, device);
    if (split.workload.num_splits > 1) {
      split.workload.kernel = p.workload.kernel;
      split.workload.impl = p.workload.impl;
      return split;
    }
  }
  // One query token with GQA: FA-2's forward swaps the group's query heads into query rows
  // (flash_api.cpp, seqlenq_ngroups_swapped), one CTA per (batch, KV head); the backward is not
  // swapped. Q, O and LSE addresses of the packed view are the workload's.
  p.launches.push_back(
      std::make_unique<Flash2Fwd>(core::packed_query_groups(p.workload), flash2_mma_flavour(p.workload, device)));
  if (p.workload.pass == core::Pass::kFwdBwd) {
    const core::Workload b = backward_view(p.workload);
    p.launches.push_back(std::make_unique<Flash2BwdPreprocess>(b));
    p.launches.push_back(std::make_unique<Flash2Bwd>(
        b, fitting_bwd_traits(b.head_dim, b.value_bytes(), KernelDefaults::smem_limit(device)),
        device.sm.max_registers_per_block));
    p.launches.push_back(std::make_unique<Flash2ConvertDq>(b));
    if (b.kv_heads != 0 && b.kv_heads < b.heads) {  // mha_bwd: at::sum_out of dK, then of dV, over the group
      p.launches.push_back(std::make_unique<Flash2BwdGroupSum>(b, Tensor::kDK));
      p.launches.push_back(std::make_unique<Flash2BwdGroupSum>(b, Tensor::kDV));
    }
  }
  return p;
}

}  // namespace attnsim::kernels
