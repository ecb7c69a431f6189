// FlashAttention-3 forward (arXiv 2407.08608; Dao-AILab/flash-attention hopper/): one CTA per
// (batch, head, block_m query rows) with a TMA producer and 64-row consumer warp groups running
// async wgmma, intra-warp-group overlap and ping-pong, emitted as one merged op stream.
#include "kernels/flash3.h"

#include <algorithm>

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

[[noreturn]] void fail(const std::string& key, const std::string& msg) {
  throw core::ConfigError(core::ConfigProblem{"", 0, key, msg});
}

constexpr std::uint64_t kRowsPerWarpGroup = 64;  // wgmma's M: one consumer warp group owns 64 rows

// One tile of the merged stream: the producer's TMA loads, each consumer unit's async GEMMs,
// softmax and rescale, in the order FA-3's named barriers impose. A unit is one consumer warp
// group when ping-pong orders their GEMMs, or all of them together when they run in lock step.
class TileStream {
 public:
  TileStream(const Flash3Schedule& s, const TensorLayout& layout, std::vector<TileOp>& out)
      : s_(s), layout_(layout), out_(out) {}

  void emit(std::uint64_t bh, std::uint64_t row0, std::uint64_t r, std::uint64_t blocks, std::uint64_t off) {
    bh_ = bh;
    n_ = blocks;
    row0_ = row0;
    off_ = off;
    units_ = s_.pingpong ? s_.consumer_warpgroups : 1;
    rows_ = s_.pingpong ? kRowsPerWarpGroup : kRowsPerWarpGroup * s_.consumer_warpgroups;
    k_load_.assign(n_, 0);
    v_load_.assign(n_, 0);
    gs_.assign(units_ * n_, 0);
    gp_.assign(units_ * n_, 0);
    s_done_.assign(n_, 0);
    pv_done_.assign(n_, 0);
    v_ready_.assign(n_, false);
    // Prologue (FA-3's producer warp): Q once, then K and V of the first `stages` blocks, each
    // a TMA copy completing its own barrier (here: its own async group, oldest first).
    TileOp q = layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, row0, r, true);
    q.bulk = true;
    out_.push_back(q);
    commit_load();
    q_load_ = loads_ - 1;
    for (std::uint64_t jj = 0; jj < std::min<std::uint64_t>(n_, s_.stages); ++jj) {
      load_k(jj);
      load_v(jj);
    }
    // Iterations jj = 0 .. n-1 over the K/V blocks from the last (n_block_max - 1) down; with
    // intra-warp-group overlap one more turn issues the last P V. Ping-pong order: after unit w
    // issues its GEMMs, the next unit finishes its previous block (softmax), then issues.
    const std::uint64_t turns = s_.intrawg_overlap ? n_ + 1 : n_;
    for (std::uint64_t jj = 0; jj < turns; ++jj)
      for (std::uint64_t w = 0; w < units_; ++w) {
        issue(w, jj);
        const std::uint64_t next = (w + 1) % units_;
        const bool wrap = w + 1 == units_;
        if (wrap) finish(next, jj);
        else if (jj > 0) finish(next, jj - 1);
      }
    for (std::uint64_t w = 1; w < units_; ++w) finish(w, turns - 1);
    // Epilogue: O scaled by 1/ℓ, written to shared memory (over the V buffers) and stored by
    // TMA; the LSE rows stored from registers. FP8 writes O in bf16.
    out_.push_back(L::count_op(OpKind::kElementwise, kRowsPerWarpGroup * s_.consumer_warpgroups * s_.head_dim));
    out_.push_back(L::shared(OpKind::kSharedWrite, Tensor::kO, kRowsPerWarpGroup * s_.consumer_warpgroups,
                             s_.head_dim * s_.out_bytes));
    out_.push_back(L::tile(OpKind::kStore, Tensor::kO, bh, s_.seq_q, s_.head_dim, s_.out_bytes, row0, r, 0,
                           s_.head_dim));
    out_.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kLse, bh, row0, r));
  }

 private:
  std::uint64_t n_block(std::uint64_t jj) const { return n_ - 1 - jj; }
  std::uint64_t cols(std::uint64_t jj) const {
    const std::uint64_t c0 = n_block(jj) * s_.block_n;
    return std::min(s_.block_n, s_.seq_kv - c0);
  }
  void commit_load() {
    out_.push_back(L::simple(OpKind::kCommit));
    ++loads_;
  }
  void load_k(std::uint64_t jj) {
    TileOp k = layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh_, n_block(jj) * s_.block_n, cols(jj), true);
    k.bulk = true;
    out_.push_back(k);
    commit_load();
    k_load_[jj] = loads_ - 1;
  }
  void load_v(std::uint64_t jj) {
    TileOp v = layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh_, n_block(jj) * s_.block_n, cols(jj), true);
    v.bulk = true;
    out_.push_back(v);
    commit_load();
    v_load_[jj] = loads_ - 1;
  }
  void wait_load(std::uint64_t idx) {
    if (waited_loads_ > idx) return;
    out_.push_back(L::count_op(OpKind::kWait, loads_ - idx - 1));
    waited_loads_ = idx + 1;
  }
  // V_jj is in shared memory; FP8 (e4m3, V row-major) is transposed in shared memory by the
  // producer warp group (FA-3's Transpose_V: LDSM.T / STSM), a read and a write of the tile.
  void need_v(std::uint64_t jj) {
    wait_load(v_load_[jj]);
    if (v_ready_[jj]) return;
    v_ready_[jj] = true;
    if (s_.transpose_v) {
      const core::Bytes row = s_.head_dim * s_.value_bytes;
      out_.push_back(L::shared(OpKind::kSharedRead, Tensor::kV, s_.block_n, row));
      out_.push_back(L::shared(OpKind::kSharedWrite, Tensor::kV, s_.block_n, row));
    }
  }
  std::uint64_t mma(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
    TileOp op = L::mma(m, n, k);
    op.async = true;
    out_.push_back(op);
    return mmas_++;
  }
  void wait_mma(std::uint64_t idx) {
    if (waited_mmas_ > idx) return;
    TileOp w = L::count_op(OpKind::kWait, mmas_ - idx - 1);
    w.async = true;
    out_.push_back(w);
    waited_mmas_ = idx + 1;
  }
  void issue(std::uint64_t w, std::uint64_t jj) {
    const std::uint64_t bn = s_.block_n, d = s_.head_dim;
    if (jj < n_) {
      wait_load(k_load_[jj]);
      gs_[w * n_ + jj] = mma(rows_, bn, d);  // S = Q K_jᵀ (SS wgmma)
    }
    if (s_.intrawg_overlap && jj > 0) {  // O += P_{j-1} V_{j-1} (RS wgmma), with S_j in flight
      need_v(jj - 1);
      gp_[w * n_ + jj - 1] = mma(rows_, d, bn);
    }
  }
  void s_consumed(std::uint64_t jj) {
    if (++s_done_[jj] == units_ && jj + s_.stages < n_) load_k(jj + s_.stages);  // K buffer released
  }
  void pv_consumed(std::uint64_t jj) {
    if (++pv_done_[jj] == units_ && jj + s_.stages < n_) load_v(jj + s_.stages);  // V buffer released
  }
  void finish(std::uint64_t w, std::uint64_t jj) {
    const std::uint64_t bn = s_.block_n, d = s_.head_dim, m = rows_;
    if (jj < n_) {
      wait_mma(gs_[w * n_ + jj]);
      s_consumed(jj);
      // Online softmax of the block (as flash2 counts it: scale, max, subtract; exp per score
      // and one per row for the rescale factor); the causal diagonal and a partial last block
      // masked elementwise.
      const std::uint64_t c0 = n_block(jj) * bn;
      const bool masked = cols(jj) < bn || (s_.causal && c0 + bn > row0_ + off_ + 1);
      out_.push_back(L::count_op(OpKind::kElementwise, (masked ? 4 : 3) * m * bn));
      out_.push_back(L::count_op(OpKind::kExp, m * bn + m));
      if (s_.intrawg_overlap) {
        if (jj > 0) {
          wait_mma(gp_[w * n_ + jj - 1]);
          pv_consumed(jj - 1);
          out_.push_back(L::count_op(OpKind::kElementwise, m * d));  // rescale O
        }
      } else {
        if (jj > 0) out_.push_back(L::count_op(OpKind::kElementwise, m * d));
        need_v(jj);
        gp_[w * n_ + jj] = mma(m, d, bn);
        wait_mma(gp_[w * n_ + jj]);
        pv_consumed(jj);
      }
      return;
    }
    wait_mma(gp_[w * n_ + n_ - 1]);  // the last P V
    pv_consumed(n_ - 1);
  }

  const Flash3Schedule& s_;
  const TensorLayout& layout_;
  std::vector<TileOp>& out_;
  std::uint64_t bh_ = 0, n_ = 0, row0_ = 0, off_ = 0, units_ = 1, rows_ = 0;
  std::uint64_t loads_ = 0, waited_loads_ = 0, mmas_ = 0, waited_mmas_ = 0, q_load_ = 0;
  std::vector<std::uint64_t> k_load_, v_load_, gs_, gp_, s_done_, pv_done_;
  std::vector<bool> v_ready_;
};

class Flash3Fwd : public core::KernelLaunch {
 public:
  Flash3Fwd(const core::Workload& w, const Flash3Schedule& s)
      : w_(w), s_(s), layout_(w), t_r_(core::ceil_div(w.seq_q, w.block_m)) {}
  std::string name() const override { return "flash3_fwd"; }
  core::LaunchShape shape() const override {
    core::LaunchShape sh;
    sh.grid_x = t_r_;
    sh.grid_y = w_.heads;
    sh.grid_z = w_.batch;
    sh.threads_per_cta = w_.warps * 32;
    sh.regs_per_thread = w_.regs_per_thread;
    sh.smem_dynamic_bytes = w_.smem_per_cta;
    return sh;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t bhs = w_.batch * w_.heads;
    const bool row_major = w_.cta_order == core::CtaOrder::kRowMajor;
    std::uint64_t i = row_major ? cta % t_r_ : cta / bhs;
    const std::uint64_t bh = row_major ? cta / t_r_ : cta % bhs;
    // Causal: FA-3's tile scheduler hands out the longest tiles (last query blocks) first.
    if (w_.causal) i = t_r_ - 1 - i;
    const std::uint64_t row0 = i * w_.block_m, r = std::min(w_.block_m, w_.seq_q - row0);
    const std::uint64_t off = w_.seq_kv - w_.seq_q;
    const std::uint64_t blocks = w_.causal ? KernelDefaults::causal_col_blocks(row0, r, off, w_.seq_kv, w_.block_n)
                                           : core::ceil_div(w_.seq_kv, w_.block_n);
    TileStream(s_, layout_, out).emit(bh, row0, r, blocks, off);
    return true;
  }

 private:
  core::Workload w_;
  Flash3Schedule s_;
  TensorLayout layout_;
  std::uint64_t t_r_;
};

}  // namespace

Flash3Tile flash3_default_tile(std::uint64_t d, core::DType dtype, bool causal) {
  // hopper/tile_size.h, tile_size_fwd_sm90 (not local, no paged KV, no softcap, headdim_v = d):
  // {kBlockM, kBlockN, MmaPV_is_RS, IntraWGOverlap}.
  if (dtype == core::DType::kFp8) {
    if (d <= 64) return {192, 160, true, true};
    if (d <= 96) return {192, 128, true, true};
    if (d <= 128) return {128, 224, true, true};
    if (d <= 192) return {128, 160, true, true};
    return {128, 128, true, true};
  }
  if (d <= 64) return {192, causal ? 128u : 192u, causal, true};
  if (d <= 96) return {192, 144, false, true};
  if (d <= 128) return {128, causal ? 128u : 176u, true, true};
  if (d <= 192) return {128, d <= 128 ? 128u : 112u, true, true};
  return {128, 80, true, true};
}

bool flash3_default_pingpong(std::uint32_t consumer_warpgroups, bool intrawg_overlap, std::uint64_t d,
                             core::DType dtype) {
  // mainloop_fwd_sm90_tma_gmma_ws.hpp, UseSchedulerBarrier (headdim_v <= 256).
  const bool fp8 = dtype == core::DType::kFp8;
  if (intrawg_overlap) return consumer_warpgroups >= 2 && (fp8 ? d >= 128 : d <= 128);
  return consumer_warpgroups == 2;
}

Flash3Registers flash3_registers(std::uint32_t consumer_warpgroups) {
  // flash_fwd_kernel_sm90.h: LoadRegisterRequirement / MmaRegisterRequirement (TMA for K, V).
  if (consumer_warpgroups == 1) return {56, 256};
  if (consumer_warpgroups == 2) return {24, 240};
  return {32, 160};
}

Flash3Schedule flash3_schedule(const core::Workload& w) {
  Flash3Schedule s;
  s.seq_q = w.seq_q;
  s.seq_kv = w.seq_kv;
  s.head_dim = w.head_dim;
  s.block_n = w.block_n;
  s.consumer_warpgroups = w.consumer_warpgroups;
  s.stages = w.stages;
  s.pingpong = w.pingpong > 0;
  s.intrawg_overlap = w.intrawg_overlap > 0;
  s.causal = w.causal;
  s.value_bytes = w.value_bytes();
  s.out_bytes = flash3_out_bytes(w.dtype);
  s.transpose_v = w.dtype == core::DType::kFp8;
  return s;
}

core::Bytes flash3_out_bytes(core::DType dtype) { return dtype == core::DType::kFp8 ? 2 : core::bytes_per_value(dtype); }

core::Bytes flash3_smem(const core::Workload& w, bool mma_pv_rs) {
  // The mainloop's tensor storage (Q, `stages` K and V buffers, V's transposed copy for FP8, P
  // when the PV GEMM reads it from shared memory) with the epilogue's O in a union over V.
  const core::Bytes v = w.value_bytes(), d = w.head_dim;
  const core::Bytes q = w.block_m * d * v, k = w.stages * w.block_n * d * v;
  const core::Bytes vt = (w.dtype == core::DType::kFp8 ? 2 : 1) * w.stages * w.block_n * d * v;
  const core::Bytes o = w.block_m * d * flash3_out_bytes(w.dtype);
  const core::Bytes p = mma_pv_rs ? 0 : w.block_m * w.block_n * v;
  return q + k + std::max(vt, o) + p;
}

core::Workload flash3_resolve(const core::Workload& in, const core::DeviceSpec& device) {
  if (device.kind != core::DeviceKind::kGpu || device.compute_capability < 90)
    fail("kernel", "flash3 needs a GPU of compute capability >= 90 (TMA, wgmma, setmaxnreg); device '" + device.name +
                       "' has device.compute_capability " + std::to_string(device.compute_capability));
  core::Workload w = KernelDefaults::validate_shape(in);
  if (w.dtype == core::DType::kFp32) fail("dtype", "flash3 runs fp16, bf16 or fp8 (FA-3 has no fp32 kernel)");
  if (w.head_dim > 256 || w.head_dim % 8 != 0)
    fail("head_dim", "flash3 supports head dims up to 256 in multiples of 8, got " + std::to_string(w.head_dim));
  const Flash3Tile t = flash3_default_tile(w.head_dim, w.dtype, w.causal);
  if (w.consumer_warpgroups != 0 && w.block_m != 0 && w.block_m != kRowsPerWarpGroup * w.consumer_warpgroups)
    fail("block_m", "flash3's block_m is 64 x consumer_warpgroups (" +
                        std::to_string(kRowsPerWarpGroup * w.consumer_warpgroups) + "), got " + std::to_string(w.block_m));
  if (w.block_m == 0) w.block_m = w.consumer_warpgroups ? kRowsPerWarpGroup * w.consumer_warpgroups : t.block_m;
  if (w.block_m % kRowsPerWarpGroup != 0 || w.block_m > 3 * kRowsPerWarpGroup)
    fail("block_m", "flash3's block_m must be 64, 128 or 192 (64 query rows per consumer warp group), got " +
                        std::to_string(w.block_m));
  w.consumer_warpgroups = static_cast<std::uint32_t>(w.block_m / kRowsPerWarpGroup);
  if (w.block_n == 0) w.block_n = t.block_n;
  if (w.block_n % 16 != 0 || w.block_n > 256)
    fail("block_n", "flash3's block_n must be a multiple of 16 up to 256 (the wgmma N), got " + std::to_string(w.block_n));
  const std::uint32_t warps = 4 * (w.consumer_warpgroups + 1);  // the producer warp group and the consumers
  if (w.warps != 0 && w.warps != warps)
    fail("warps", "flash3 runs one producer and " + std::to_string(w.consumer_warpgroups) +
                      " consumer warp groups: warps must be " + std::to_string(warps) + ", got " + std::to_string(w.warps));
  w.warps = warps;
  if (w.stages == 0) w.stages = 2;  // flash_fwd_launch_template.h: kStages = 2 on sm90
  if (w.intrawg_overlap < 0) w.intrawg_overlap = t.intrawg_overlap ? 1 : 0;
  if (w.pingpong < 0)
    w.pingpong = flash3_default_pingpong(w.consumer_warpgroups, w.intrawg_overlap > 0, w.head_dim, w.dtype) ? 1 : 0;
  // The PV GEMM reads P from registers (RS) where FA-3's tile says so; FP8 always (Transpose_V).
  const bool rs = t.mma_pv_rs || w.dtype == core::DType::kFp8;
  const core::Bytes need = flash3_smem(w, rs);
  const std::string what = "flash3 tiles " + std::to_string(w.block_m) + "x" + std::to_string(w.block_n) +
                           " (head_dim " + std::to_string(w.head_dim) + ", " + std::to_string(w.stages) + " stages)";
  if (w.smem_per_cta == 0) {
    KernelDefaults::check_smem(need, device, w.block_n * w.stages * 2 > w.block_m ? "block_n" : "block_m", what);
    w.smem_per_cta = need;
  }
  KernelDefaults::check_smem(w.smem_per_cta, device, "smem_per_cta", what);
  if (w.regs_per_thread == 0) {
    // setmaxnreg moves registers between the warp groups inside the CTA's allocation; the launch
    // allocates the register file evenly (one CTA per SM: __launch_bounds__ min blocks 1).
    const std::uint32_t per_block = device.sm.max_registers_per_block ? device.sm.max_registers_per_block : 65536;
    const std::uint32_t cap = device.sm.max_registers_per_thread ? device.sm.max_registers_per_thread : 255;
    w.regs_per_thread = std::min<std::uint32_t>(cap, per_block / (w.warps * 32)) / 8 * 8;
  }
  return w;
}

core::TileProgram make_flash3(const core::Workload& workload, const core::DeviceSpec& device) {
  core::TileProgram p;
  p.workload = flash3_resolve(workload, device);
  if (p.workload.pass == core::Pass::kFwdBwd)
    fail("pass", "flash3 models FA-3's forward only (pass: fwd); its backward is not modelled yet");
  p.launches.push_back(std::make_unique<Flash3Fwd>(p.workload, flash3_schedule(p.workload)));
  return p;
}

}  // namespace attnsim::kernels
