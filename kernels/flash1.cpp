// FlashAttention Algorithm 1 (arXiv 2205.14135): an init launch writes O = 0, ℓ = 0, m = -inf
// to HBM; then one CTA per (batch, head) walks the outer loop over K/V blocks (B_c = block_n)
// and the inner loop over query blocks (B_r = block_m), reading and writing O, ℓ, m each time.
// pass fwdbwd adds Algorithm 4 (appendix B.4): an init launch writes dQ = dK = dV = 0 (line 5);
// then one CTA per (batch, head): outer loop over K/V blocks j, inner over query blocks i, each
// (i, j) loading Q_i, O_i, dO_i, dQ_i, ℓ_i, m_i and writing dQ_i back; dK_j, dV_j written once per j.
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

// Commits the loads issued so far as one group, waits for every group, then __syncthreads.
void wait_all(std::vector<TileOp>& out) {
  out.push_back(L::simple(OpKind::kCommit));
  out.push_back(L::count_op(OpKind::kWait, 0));
  out.push_back(L::simple(OpKind::kBarrier));
}

struct KvBlock {
  std::uint64_t col0, cols;        // keys [col0, col0 + cols)
  std::uint64_t first_row_block;   // causal: the first query block that sees them (else 0)
};

// Outer step j of Algorithms 1 and 4: K_j and V_j into SRAM (precondition: j < T_c).
KvBlock load_kv_block(const core::Workload& w, const TensorLayout& layout, std::uint64_t bh, std::uint64_t j,
                      std::vector<TileOp>& out) {
  KvBlock b;
  b.col0 = j * w.block_n;
  b.cols = std::min(w.block_n, w.seq_kv - b.col0);
  out.push_back(layout.kv_rows(OpKind::kLoad, Tensor::kK, bh, b.col0, b.cols, true));
  out.push_back(layout.kv_rows(OpKind::kLoad, Tensor::kV, bh, b.col0, b.cols, true));
  wait_all(out);
  b.first_row_block =
      w.causal ? KernelDefaults::causal_first_row(b.col0, w.seq_kv - w.seq_q, w.block_m) / w.block_m : 0;
  return b;
}

class Flash1Init : public core::KernelLaunch {
 public:
  explicit Flash1Init(const core::Workload& w) : w_(w), layout_(w), t_r_(core::ceil_div(w.seq_q, w.block_m)) {}
  std::string name() const override { return "flash1_init"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = t_r_;
    s.grid_y = w_.heads;
    s.grid_z = w_.batch;
    s.threads_per_cta = 128;
    s.regs_per_thread = 16;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t bh = cta / t_r_, row0 = (cta % t_r_) * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
    out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kO, bh, row0, r));
    out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kL, bh, row0, r));
    out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kM, bh, row0, r));
    return true;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  std::uint64_t t_r_;
};

// One step per outer iteration j (K_j, V_j load, then every inner iteration i over the query
// blocks that see block j), so memory stays bounded by the number of query blocks.
class Flash1Fwd : public core::KernelLaunch {
 public:
  explicit Flash1Fwd(const core::Workload& w) : w_(w), layout_(w) {}
  std::string name() const override { return "flash1_fwd"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = 1;
    s.grid_y = w_.heads;
    s.grid_z = w_.batch;
    s.threads_per_cta = w_.warps * 32;
    s.regs_per_thread = w_.regs_per_thread;
    s.smem_dynamic_bytes = w_.smem_per_cta;
    return s;
  }
  bool emit_step(std::uint64_t bh, std::uint64_t j, std::vector<TileOp>& out) const override {
    if (j >= core::ceil_div(w_.seq_kv, w_.block_n)) return false;
    const KvBlock kv = load_kv_block(w_, layout_, bh, j, out);
    const std::uint64_t d = w_.head_dim, col0 = kv.col0, c = kv.cols;
    for (std::uint64_t i = kv.first_row_block; i < core::ceil_div(w_.seq_q, w_.block_m); ++i) {
      const std::uint64_t row0 = i * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, row0, r, true));
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kO, bh, row0, r, true));
      out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kL, bh, row0, r));
      out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kM, bh, row0, r));
      wait_all(out);
      out.push_back(L::mma(r, c, d));
      const bool diagonal = w_.causal && row0 + r + (w_.seq_kv - w_.seq_q) < col0 + c;
      out.push_back(L::count_op(OpKind::kElementwise, (diagonal ? 4 : 3) * r * c + 2 * r * d));
      out.push_back(L::count_op(OpKind::kExp, r * c + 2 * r));
      out.push_back(L::mma(r, d, c));
      out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kO, bh, row0, r));
      out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kL, bh, row0, r));
      out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kM, bh, row0, r));
      out.push_back(L::simple(OpKind::kBarrier));
    }
    return true;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
};

// Algorithm 4 line 5: dQ = 0, dK = 0, dV = 0 in HBM. One CTA per (b, h, block x) for
// x < max(T_r, T_c): query block x of dQ (B_r rows), key block x of dK and dV (B_c rows).
class Flash1BwdInit : public core::KernelLaunch {
 public:
  explicit Flash1BwdInit(const core::Workload& w)
      : w_(w), layout_(w), t_r_(core::ceil_div(w.seq_q, w.block_m)), t_c_(core::ceil_div(w.seq_kv, w.block_n)) {}
  std::string name() const override { return "flash1_bwd_init"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = std::max(t_r_, t_c_);
    s.grid_y = w_.heads;
    s.grid_z = w_.batch;
    s.threads_per_cta = 128;
    s.regs_per_thread = 16;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t x_n = std::max(t_r_, t_c_), bh = cta / x_n, x = cta % x_n;
    if (x < t_r_) {
      const std::uint64_t row0 = x * w_.block_m;
      out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kDQ, bh, row0, std::min(w_.block_m, w_.seq_q - row0)));
    }
    if (x < t_c_) {
      const std::uint64_t col0 = x * w_.block_n, c = std::min(w_.block_n, w_.seq_kv - col0);
      out.push_back(layout_.grad_kv_rows(OpKind::kStore, Tensor::kDK, bh, col0, c));
      out.push_back(layout_.grad_kv_rows(OpKind::kStore, Tensor::kDV, bh, col0, c));
    }
    return true;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  std::uint64_t t_r_, t_c_;
};

// Algorithm 4, one CTA per (batch, head), one engine step per outer iteration j: load K_j, V_j;
// for each query block i that sees block j: load Q_i, O_i, dO_i, dQ_i, ℓ_i, m_i, recompute
// P_ij = exp(S_ij - m_i)/ℓ_i, dṼ_j += P_ijᵀ dO_i, dP_ij = dO_i V_jᵀ, D_i = rowsum(dO_i ∘ O_i),
// dS_ij = P_ij ∘ (dP_ij - D_i), write dQ_i += dS_ij K_j, dK̃_j += dS_ijᵀ Q_i; then write dK_j, dV_j.
class Flash1Bwd : public core::KernelLaunch {
 public:
  Flash1Bwd(const core::Workload& w, core::Bytes smem, std::uint32_t regs)
      : w_(w), layout_(w), smem_(smem), regs_(regs) {}
  std::string name() const override { return "flash1_bwd"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = 1;
    s.grid_y = w_.heads;
    s.grid_z = w_.batch;
    s.threads_per_cta = w_.warps * 32;
    s.regs_per_thread = regs_;
    s.smem_dynamic_bytes = smem_;
    return s;
  }
  // On chip: K_j, V_j (B_c·d) and Q_i, O_i, dO_i, dQ_i (B_r·d) tiles in shared memory; the fp32
  // accumulators dK̃_j, dṼ_j and the score tile in registers, as the forward's S, P.
  static core::Bytes smem(const core::Workload& w) {
    return (2 * w.block_n + 4 * w.block_m) * w.head_dim * w.value_bytes();
  }
  // fp32 dK̃_j, dṼ_j (2·B_c·d) and S/dS (B_r·B_c) spread over the threads, P in 16-bit, + 40;
  // rounded up to 8, capped at the device's per-thread maximum.
  static std::uint32_t regs(const core::Workload& w, const core::DeviceSpec& device) {
    const std::uint64_t threads = w.warps * 32ull, bc = w.block_n, br = w.block_m;
    const std::uint64_t acc = core::ceil_div(2 * bc * w.head_dim + br * bc, threads);
    const std::uint64_t r = core::ceil_div(acc + core::ceil_div(br * bc, 2 * threads) + 40, 8) * 8;
    const std::uint64_t cap = device.sm.max_registers_per_thread ? device.sm.max_registers_per_thread : 255;
    return static_cast<std::uint32_t>(std::min(r, cap));
  }
  bool emit_step(std::uint64_t bh, std::uint64_t j, std::vector<TileOp>& out) const override {
    if (j >= core::ceil_div(w_.seq_kv, w_.block_n)) return false;
    const KvBlock kv = load_kv_block(w_, layout_, bh, j, out);
    const std::uint64_t d = w_.head_dim, col0 = kv.col0, c = kv.cols;
    for (std::uint64_t i = kv.first_row_block; i < core::ceil_div(w_.seq_q, w_.block_m); ++i) {
      const std::uint64_t row0 = i * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, row0, r, true));
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kO, bh, row0, r, true));
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kDO, bh, row0, r, true));
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kDQ, bh, row0, r, true));
      out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kL, bh, row0, r));
      out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kM, bh, row0, r));
      wait_all(out);
      out.push_back(L::mma(r, c, d));  // S_ij = Q_i K_jᵀ
      const bool diagonal = w_.causal && row0 + r + (w_.seq_kv - w_.seq_q) < col0 + c;
      out.push_back(L::count_op(OpKind::kElementwise, (diagonal ? 4 : 3) * r * c));  // scale, mask, - m_i, / ℓ_i
      out.push_back(L::count_op(OpKind::kExp, r * c));                               // P_ij
      out.push_back(L::mma(c, d, r));                                                // dṼ_j += P_ijᵀ dO_i
      out.push_back(L::mma(r, c, d));                                                // dP_ij = dO_i V_jᵀ
      out.push_back(L::count_op(OpKind::kElementwise, 2 * r * d + 2 * r * c));       // D_i, dS_ij
      out.push_back(L::mma(r, d, c));                                                // dQ_i += dS_ij K_j
      out.push_back(L::count_op(OpKind::kElementwise, r * d));
      out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kDQ, bh, row0, r));
      out.push_back(L::mma(c, d, r));  // dK̃_j += dS_ijᵀ Q_i
      out.push_back(L::simple(OpKind::kBarrier));
    }
    out.push_back(layout_.grad_kv_rows(OpKind::kStore, Tensor::kDK, bh, col0, c));
    out.push_back(layout_.grad_kv_rows(OpKind::kStore, Tensor::kDV, bh, col0, c));
    return true;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  core::Bytes smem_;
  std::uint32_t regs_;
};

core::Workload resolve(const core::Workload& in, const core::DeviceSpec& device) {
  core::Workload w = KernelDefaults::validate_shape(in);
  const core::Bytes v = w.value_bytes();
  if (w.block_m == 0 || w.block_n == 0) {
    core::Bytes m_bytes = w.sram_bytes;
    if (m_bytes == 0) {
      // Default M: the on-chip SRAM per SM, as the paper defines M (192 KB on the A100). Where
      // its blocks' tiles (forward, and backward for fwdbwd) exceed what one CTA may allocate,
      // the largest M whose tiles fit instead (docs/kernels.md).
      const bool backward = w.pass == core::Pass::kFwdBwd;
      m_bytes = KernelDefaults::onchip_sram_per_sm(device);
      if (flash1_tile_bytes(flash1_block_sizes(m_bytes, w.head_dim, v), w.head_dim, v, backward) >
          KernelDefaults::smem_limit(device)) {
        const core::Bytes fit = flash1_largest_fitting_sram(KernelDefaults::smem_limit(device), w.head_dim, v, backward);
        if (fit > 0) m_bytes = fit;  // else nothing fits: the check below names the tiles
      }
      w.sram_bytes = m_bytes;
    }
    const Flash1Blocks b = flash1_block_sizes(m_bytes, w.head_dim, v);
    if (w.block_m == 0) w.block_m = b.b_r;
    if (w.block_n == 0) w.block_n = b.b_c;
  }
  if (w.warps == 0) w.warps = 4;
  if (w.stages == 0) w.stages = 1;
  const core::Bytes tiles = flash1_tile_bytes({w.block_m, w.block_n}, w.head_dim, v, false);
  const std::string what = "flash1 blocks B_r=" + std::to_string(w.block_m) + ", B_c=" + std::to_string(w.block_n);
  if (w.smem_per_cta == 0) {
    KernelDefaults::check_smem(tiles, device, in.sram_bytes ? "sram_bytes" : "block_n", what);
    w.smem_per_cta = tiles;
  }
  KernelDefaults::check_smem(w.smem_per_cta, device, "smem_per_cta", what);
  if (w.pass == core::Pass::kFwdBwd)
    KernelDefaults::check_smem(Flash1Bwd::smem(w), device, "block_n", "flash1 backward (Algorithm 4) " + what);
  if (w.regs_per_thread == 0)
    w.regs_per_thread = KernelDefaults::attention_regs(w.block_m, w.block_n, w.head_dim, w.warps * 32, device);
  return w;
}

}  // namespace

core::TileProgram make_flash1(const core::Workload& workload, const core::DeviceSpec& device) {
  core::TileProgram p;
  p.workload = resolve(workload, device);
  p.launches.push_back(std::make_unique<Flash1Init>(p.workload));
  p.launches.push_back(std::make_unique<Flash1Fwd>(p.workload));
  if (p.workload.pass == core::Pass::kFwdBwd) {
    // regs_per_thread, when given, is what ptxas reported for the launch; applies to both.
    const std::uint32_t regs = workload.regs_per_thread ? p.workload.regs_per_thread : Flash1Bwd::regs(p.workload, device);
    p.launches.push_back(std::make_unique<Flash1BwdInit>(p.workload));
    p.launches.push_back(std::make_unique<Flash1Bwd>(p.workload, Flash1Bwd::smem(p.workload), regs));
  }
  return p;
}

}  // namespace attnsim::kernels
