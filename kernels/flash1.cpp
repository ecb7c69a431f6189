// FlashAttention Algorithm 1 (arXiv 2205.14135): an init launch writes O = 0, ℓ = 0, m = -inf
// to HBM; then one CTA per (batch, head) walks the outer loop over K/V blocks (B_c = block_n)
// and the inner loop over query blocks (B_r = block_m), reading and writing O, ℓ, m each time.
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
    const std::uint64_t t_c = core::ceil_div(w_.seq_kv, w_.block_n), t_r = core::ceil_div(w_.seq_q, w_.block_m);
    if (j >= t_c) return false;
    const std::uint64_t d = w_.head_dim, col0 = j * w_.block_n, c = std::min(w_.block_n, w_.seq_kv - col0);
    out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, col0, c, true));
    out.push_back(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh, col0, c, true));
    out.push_back(L::simple(OpKind::kCommit));
    out.push_back(L::count_op(OpKind::kWait, 0));
    out.push_back(L::simple(OpKind::kBarrier));
    const std::uint64_t first =
        w_.causal ? KernelDefaults::causal_first_row(col0, w_.seq_kv - w_.seq_q, w_.block_m) / w_.block_m : 0;
    for (std::uint64_t i = first; i < t_r; ++i) {
      const std::uint64_t row0 = i * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, row0, r, true));
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kO, bh, row0, r, true));
      out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kL, bh, row0, r));
      out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kM, bh, row0, r));
      out.push_back(L::simple(OpKind::kCommit));
      out.push_back(L::count_op(OpKind::kWait, 0));
      out.push_back(L::simple(OpKind::kBarrier));
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

core::Workload resolve(const core::Workload& in, const core::DeviceSpec& device) {
  core::Workload w = KernelDefaults::validate_shape(in);
  if (w.pass != core::Pass::kFwd)
    throw core::ConfigError(core::ConfigProblem{"", 0, "pass", "flash1 models the forward pass only (use flash2)"});
  const core::Bytes v = w.value_bytes();
  if (w.block_m == 0 || w.block_n == 0) {
    core::Bytes m_bytes = w.sram_bytes;
    if (m_bytes == 0) {
      // Default M: what one CTA may hold, rounded down to a multiple of 4·d values so the four
      // tiles K_j, V_j, Q_i, O_i (≤ 4·B_c·d values) fit in it.
      const std::uint64_t unit = 4 * w.head_dim;
      m_bytes = (KernelDefaults::smem_limit(device) / v) / unit * unit * v;
      w.sram_bytes = m_bytes;
    }
    const Flash1Blocks b = flash1_block_sizes(m_bytes, w.head_dim, v);
    if (w.block_m == 0) w.block_m = b.b_r;
    if (w.block_n == 0) w.block_n = b.b_c;
  }
  if (w.warps == 0) w.warps = 4;
  if (w.stages == 0) w.stages = 1;
  const core::Bytes tiles = (2 * w.block_n + 2 * w.block_m) * w.head_dim * v;
  const std::string what = "flash1 blocks B_r=" + std::to_string(w.block_m) + ", B_c=" + std::to_string(w.block_n);
  if (w.smem_per_cta == 0) {
    KernelDefaults::check_smem(tiles, device, in.sram_bytes ? "sram_bytes" : "block_n", what);
    w.smem_per_cta = tiles;
  }
  KernelDefaults::check_smem(w.smem_per_cta, device, "smem_per_cta", what);
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
  return p;
}

}  // namespace attnsim::kernels
