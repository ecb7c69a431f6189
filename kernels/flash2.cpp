// FlashAttention-2 (arXiv 2307.08691): one CTA per (batch, head, query block), inner loop over
// K/V blocks with an async multi-stage pipeline; backward: Delta preprocessing, one CTA per
// (batch, head, K/V block) recomputing P, dQ accumulated in fp32 (read-modify-write), convert.
#include <algorithm>

#include "kernels/block_sizes.h"
#include "kernels/factories.h"
#include "kernels/kernel_defaults.h"
#include "kernels/tensor_layout.h"

namespace attnsim::kernels {

namespace {

using core::OpKind;
using core::Tensor;
using core::TileOp;
using L = TensorLayout;

core::LaunchShape attention_shape(const core::Workload& w, std::uint64_t grid_x) {
  core::LaunchShape s;
  s.grid_x = grid_x;
  s.grid_y = w.heads;
  s.grid_z = w.batch;
  s.threads_per_cta = w.warps * 32;
  s.regs_per_thread = w.regs_per_thread;
  s.smem_dynamic_bytes = w.smem_per_cta;
  return s;
}

class Flash2Fwd : public core::KernelLaunch {
 public:
  explicit Flash2Fwd(const core::Workload& w) : w_(w), layout_(w), t_r_(core::ceil_div(w.seq_q, w.block_m)) {}
  std::string name() const override { return "flash2_fwd"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s = attention_shape(w_, t_r_);
    s.stack_frame_bytes = w_.stack_frame_bytes;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    const std::uint64_t bhs = w_.batch * w_.heads;
    const bool row_major = w_.cta_order == core::CtaOrder::kRowMajor;
    const std::uint64_t i = row_major ? cta % t_r_ : cta / bhs;
    const std::uint64_t bh = row_major ? cta / t_r_ : cta % bhs;
    const std::uint64_t row0 = i * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
    const std::uint64_t blocks =
        w_.causal ? KernelDefaults::causal_col_blocks(row0, r, w_.seq_kv - w_.seq_q, w_.seq_kv, w_.block_n)
                  : core::ceil_div(w_.seq_kv, w_.block_n);
    const std::uint64_t pre = w_.stages > 1 ? w_.stages - 1 : 0;
    const std::uint64_t d = w_.head_dim;
    auto kv_block = [&](std::uint64_t j) {
      const std::uint64_t c = std::min(w_.block_n, w_.seq_kv - j * w_.block_n);
      out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, j * w_.block_n, c, true));
      out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh, j * w_.block_n, c, true));
    };
    auto rows_of = [&](std::uint64_t j) { return std::min(w_.block_n, w_.seq_kv - j * w_.block_n); };
    // Operands through registers (mma.sync + ldmatrix, FA-2's Flash_fwd_kernel_traits with
    // Is_Q_in_regs = false): the warps split the block_m rows, so every warp reads all of K_j
    // and V_j from shared memory, and the Q tile is re-read each step; the tensor-core work and
    // the softmax cover the whole block_m-row tile even when fewer rows are valid (decode).
    // kernels.csv's l1tex__data_pipe_lsu_wavefronts_mem_shared agrees within 5 % on all nine
    // flash_fwd_kernel rows (docs/accuracy.md).
    const std::uint64_t m = w_.block_m, warps = std::max<std::uint64_t>(1, w_.warps);
    const core::Bytes row_bytes = d * w_.value_bytes();
    auto scores = [&](std::uint64_t j) {  // S = Q K_jᵀ and its mask
      const std::uint64_t c = rows_of(j);
      out.push_back(L::shared(OpKind::kSharedRead, Tensor::kQ, m, row_bytes));
      out.push_back(L::shared(OpKind::kSharedRead, Tensor::kK, warps * c, row_bytes));
      out.push_back(L::mma(m, c, d));
      if (w_.causal && j + 1 == blocks) out.push_back(L::count_op(OpKind::kElementwise, m * c));
    };
    auto softmax_pv = [&](std::uint64_t j) {  // online softmax (max, exp, sum, rescale O), O += P V_j
      const std::uint64_t c = rows_of(j);
      out.push_back(L::count_op(OpKind::kElementwise, 3 * m * c + m * d));
      out.push_back(L::count_op(OpKind::kExp, m * c + m));
      out.push_back(L::shared(OpKind::kSharedRead, Tensor::kV, warps * c, row_bytes));
      out.push_back(L::mma(m, d, c));
    };
    if (step == 0 && w_.stack_frame_bytes != 0) {
      // Register spills: every thread writes its stack frame to local memory once (for FA-2's
      // d = 128 kernel ptxas reports 172 B of spill stores into a 112 B frame); the engine moves
      // this CTA's frames to its resident slot's copy. Spill reloads are left out (L1 hits).
      const std::uint64_t frames = w_.stack_frame_bytes * warps * 32;  // one row of bytes
      out.push_back(L::tile(OpKind::kStore, Tensor::kLocal, 0, 1, frames, 1, 0, 1, 0, frames));
    }
    if (w_.stages == 2) {
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
    } else {
      // `stages` - 1 K/V blocks in flight ahead of the one being computed (cp.async groups).
      if (step == 0) {
        out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, row0, r, true));
        for (std::uint64_t j = 0; j < pre; ++j) {  // empty groups past the last block keep wait(pre) exact
          if (j < blocks) kv_block(j);
          out.push_back(L::simple(OpKind::kCommit));
        }
        return true;
      }
      if (step <= blocks) {
        const std::uint64_t j = step - 1;
        if (j + pre < blocks) kv_block(j + pre);
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
      out.push_back(L::count_op(OpKind::kElementwise, r * d));
      // Epilogue: O is staged through shared memory (whole tile) for coalesced stores.
      out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kO, w_.block_m, d * w_.value_bytes()));
      out.push_back(L::shared(OpKind::kSharedRead, Tensor::kO, w_.block_m, d * w_.value_bytes()));
      out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kO, bh, row0, r));
      if (w_.pass == core::Pass::kFwdBwd) out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kLse, bh, row0, r));
      return true;
    }
    return false;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  std::uint64_t t_r_;
};

// Per query block: Delta = rowsum(dO ∘ O); zero the fp32 dQ accumulator.
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

// One CTA per (batch, head, K/V block): K_j, V_j stay on chip; the query blocks that see the
// block stream through; dK_j, dV_j written once (per query head); dQ += via fp32 accumulator.
class Flash2Bwd : public core::KernelLaunch {
 public:
  explicit Flash2Bwd(const core::Workload& w) : w_(w), layout_(w), t_c_(core::ceil_div(w.seq_kv, w.block_n)) {}
  std::string name() const override { return "flash2_bwd"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s = attention_shape(w_, t_c_);
    s.smem_dynamic_bytes = bwd_smem(w_);
    return s;
  }
  static core::Bytes bwd_smem(const core::Workload& w) {
    return (2 * w.block_n + 2 * w.block_m) * w.head_dim * w.value_bytes() + w.block_m * w.block_n * w.value_bytes();
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    const std::uint64_t bh = cta / t_c_, j = cta % t_c_;
    const std::uint64_t col0 = j * w_.block_n, c = std::min(w_.block_n, w_.seq_kv - col0);
    const std::uint64_t first = w_.causal ? KernelDefaults::causal_first_row(col0, w_.seq_kv - w_.seq_q, w_.block_m) / w_.block_m : 0;
    const std::uint64_t t_r = core::ceil_div(w_.seq_q, w_.block_m), d = w_.head_dim;
    const std::uint64_t n = t_r - first;
    if (step == 0) {
      out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, col0, c, true));
      out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh, col0, c, true));
      out.push_back(L::simple(OpKind::kCommit));
      return true;
    }
    if (step <= n) {
      const std::uint64_t i = first + step - 1, row0 = i * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, row0, r, true));
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kDO, bh, row0, r, true));
      out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kLse, bh, row0, r));
      out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kDelta, bh, row0, r));
      out.push_back(L::simple(OpKind::kCommit));
      out.push_back(L::count_op(OpKind::kWait, 0));
      out.push_back(L::simple(OpKind::kBarrier));
      out.push_back(L::mma(r, c, d));                      // S = Q K_jᵀ
      out.push_back(L::count_op(OpKind::kExp, r * c));     // P = exp(S - LSE)
      out.push_back(L::mma(c, d, r));                      // dV_j += Pᵀ dO
      out.push_back(L::mma(r, c, d));                      // dP = dO V_jᵀ
      out.push_back(L::count_op(OpKind::kElementwise, 3 * r * c));  // dS = P ∘ (dP - Delta)
      out.push_back(L::mma(c, d, r));                      // dK_j += dSᵀ Q
      out.push_back(L::mma(r, d, c));                      // dQ_i (partial) = dS K_j
      out.push_back(layout_.acc_rows(OpKind::kLoad, Tensor::kDQAccum, bh, row0, r));
      out.push_back(layout_.acc_rows(OpKind::kStore, Tensor::kDQAccum, bh, row0, r));
      out.push_back(L::simple(OpKind::kBarrier));
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

core::Workload resolve(const core::Workload& in, const core::DeviceSpec& device) {
  core::Workload w = KernelDefaults::validate_shape(in);
  const Flash2Blocks defaults = flash2_default_blocks(w.head_dim);
  if (w.block_m == 0) w.block_m = defaults.b_r;
  if (w.block_n == 0) w.block_n = defaults.b_c;
  if (w.warps == 0) w.warps = 4;
  if (w.stages == 0) w.stages = 2;
  const core::Bytes tiles = (w.block_m + 2 * w.block_n * std::max<std::uint64_t>(1, w.stages - 1)) * w.head_dim *
                            w.value_bytes();
  const std::string what = "flash2 tiles " + std::to_string(w.block_m) + "x" + std::to_string(w.block_n) +
                           " (head_dim " + std::to_string(w.head_dim) + ", " + std::to_string(w.stages) + " stages)";
  if (w.smem_per_cta == 0) {
    KernelDefaults::check_smem(tiles, device, "block_m", what);
    w.smem_per_cta = tiles;
  }
  KernelDefaults::check_smem(w.smem_per_cta, device, "smem_per_cta", what);
  if (w.pass == core::Pass::kFwdBwd)
    KernelDefaults::check_smem(Flash2Bwd::bwd_smem(w), device, "block_n", "flash2 backward " + what);
  if (w.regs_per_thread == 0)
    w.regs_per_thread = KernelDefaults::attention_regs(w.block_m, w.block_n, w.head_dim, w.warps * 32, device);
  return w;
}

}  // namespace

core::TileProgram make_flash2(const core::Workload& workload, const core::DeviceSpec& device) {
  core::TileProgram p;
  p.workload = resolve(workload, device);
  p.launches.push_back(std::make_unique<Flash2Fwd>(p.workload));
  if (p.workload.pass == core::Pass::kFwdBwd) {
    p.launches.push_back(std::make_unique<Flash2BwdPreprocess>(p.workload));
    p.launches.push_back(std::make_unique<Flash2Bwd>(p.workload));
    p.launches.push_back(std::make_unique<Flash2ConvertDq>(p.workload));
  }
  return p;
}

}  // namespace attnsim::kernels
