// FlashAttention-3 forward (arXiv 2407.08608; Dao-AILab/flash-attention hopper/): one CTA per
// (batch, head, block_m query rows) with a TMA producer and 64-row consumer warp groups running
// async wgmma, intra-warp-group overlap and ping-pong; each warp group emits one step per K/V block.
#include "kernels/flash3.h"

#include <algorithm>

#include "kernels/factories.h"
#include "kernels/flash3_bwd.h"
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

// The mbarriers of a CTA (ids): Q full; per stage K full, V full, K empty, V empty; for FP8 the
// untransposed V's full barrier per stage. Named barriers: 1 + w is consumer w's ping-pong turn,
// 1 + W the consumers' epilogue barrier.
struct Barriers {
  std::uint32_t stages, consumers;
  std::uint8_t q_full() const { return 0; }
  std::uint8_t k_full(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + s); }
  std::uint8_t v_full(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + stages + s); }
  std::uint8_t k_empty(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + 2 * stages + s); }
  std::uint8_t v_empty(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + 3 * stages + s); }
  std::uint8_t vt_full(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + 4 * stages + s); }
  std::vector<std::uint32_t> counts(bool transpose_v) const {
    std::vector<std::uint32_t> c(1 + (transpose_v ? 5 : 4) * stages, 1);
    for (std::uint32_t s = 0; s < stages; ++s) c[k_empty(s)] = c[v_empty(s)] = consumers;
    return c;
  }
  std::uint8_t turn(std::uint64_t w) const { return static_cast<std::uint8_t>(1 + w); }
  std::uint8_t epilogue() const { return static_cast<std::uint8_t>(1 + consumers); }
};

constexpr std::uint64_t kWarpGroupThreads = 128;


// One tile's op streams, per warp group: the producer (group 0) issues the TMA copies of Q and of
// K_j, V_j into `stages` ring buffers (mbarriers with transaction bytes, waiting for the
// consumers' release of a buffer); consumer w (group 1 + w) owns query rows [64w, 64w + 64) and
// runs the async wgmmas, the online softmax and its part of the epilogue.
class TileStreams {
 public:
  TileStreams(const Flash3Schedule& s, const TensorLayout& layout, std::uint64_t bh, std::uint64_t row0,
              std::uint64_t r, std::uint64_t blocks, std::uint64_t off)
      : s_(s), layout_(layout), b_{s.stages, s.consumer_warpgroups}, bh_(bh), row0_(row0), r_(r), n_(blocks),
        off_(off) {}

  // The producer's step jj (0 .. blocks - 1): the copies it issues for K/V block jj.
  void producer(std::uint64_t jj, std::vector<TileOp>& out) const {
    if (jj == 0) {
      const TileOp q = L::bulk(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh_, row0_, r_, true), b_.q_full());
      out.push_back(L::barrier_op(OpKind::kMbarArrive, b_.q_full(), 1, static_cast<std::uint32_t>(q.bytes())));
      out.push_back(q);
    }
    // FA-3's order with intra-warp-group overlap: K_0, then K_{j+1} before V_j (V is needed one
    // block later); without it K_j, V_j.
    if (s_.intrawg_overlap) {
      if (jj == 0) load_k(0, out);
      if (jj + 1 < n_) load_k(jj + 1, out);
    } else {
      load_k(jj, out);
    }
    load_v(jj, out);
  }

  // Consumer w's step jj (0 .. blocks - 1): its work on K/V block jj; the first step starts with
  // the wait for Q, the last one ends with the epilogue.
  void consumer(std::uint64_t w, std::uint64_t jj, std::vector<TileOp>& out) const {
    const std::uint64_t m = kRowsPerWarpGroup, bn = s_.block_n, d = s_.head_dim, wgs = s_.consumer_warpgroups;
    const bool pp = s_.pingpong && wgs > 1;
    const std::uint64_t pair = 2 * kWarpGroupThreads;  // bar.sync of this group and the one before it
    if (jj == 0) {
      out.push_back(L::barrier_op(OpKind::kMbarWait, b_.q_full(), 0));
      if (pp && w == 0) out.push_back(L::barrier_op(OpKind::kNamedArrive, b_.turn(0), pair));  // the first turn
    }
    auto sync_turn = [&] {
      if (pp) out.push_back(L::barrier_op(OpKind::kNamedSync, b_.turn(w), pair));
    };
    auto pass_turn = [&] {
      if (pp) out.push_back(L::barrier_op(OpKind::kNamedArrive, b_.turn((w + 1) % wgs), pair));
    };
    // With ping-pong only the first group waits for the buffers: the others issue after it.
    auto wait_full = [&](std::uint8_t bar, std::uint64_t j) {
      if (!pp || w == 0) out.push_back(L::barrier_op(OpKind::kMbarWait, bar, j / s_.stages));
    };
    auto gemm = [&](std::uint64_t mm, std::uint64_t nn, std::uint64_t kk) {
      TileOp o = L::mma(mm, nn, kk);
      o.async = true;
      o.flavour = core::MmaFlavour::kWgmma;
      out.push_back(o);
      out.push_back(L::simple(OpKind::kMmaCommit));
    };
    auto mma_wait = [&](std::uint64_t pending) { out.push_back(L::count_op(OpKind::kMmaWait, pending)); };
    auto release = [&](std::uint8_t bar) { out.push_back(L::barrier_op(OpKind::kMbarArrive, bar, 1)); };
    auto softmax = [&](std::uint64_t j) {
      // Online softmax of the block, counted as flash2 does (scale, max, subtract; an exp per
      // score and one per row for the rescale factor); the causal diagonal and a ragged last
      // key block are masked elementwise.
      const std::uint64_t c0 = n_block(j) * bn;
      const bool masked = cols(j) < bn || (s_.causal && c0 + bn > row0_ + off_ + 1);
      out.push_back(L::count_op(OpKind::kElementwise, (masked ? 4 : 3) * m * bn));
      out.push_back(L::count_op(OpKind::kExp, m * bn + m));
    };
    auto rescale = [&] { out.push_back(L::count_op(OpKind::kElementwise, m * d)); };
    const std::uint64_t st = s_.stages;
    if (s_.intrawg_overlap) {
      // Block 0 (n_block_max - 1): S_0, its softmax; then each block issues S_j and
      // P_{j-1} V_{j-1} together, waits for S_j only, runs its softmax under the P V, rescales O.
      if (jj == 0) {
        wait_full(b_.k_full(0), 0);
        gemm(m, bn, d);
        mma_wait(0);
        release(b_.k_empty(0));
        softmax(0);
      } else {
        wait_full(b_.k_full(jj % st), jj);
        sync_turn();
        gemm(m, bn, d);  // S_j = Q K_jᵀ (SS)
        wait_full(b_.v_full((jj - 1) % st), jj - 1);
        gemm(m, d, bn);  // O += P_{j-1} V_{j-1} (RS)
        pass_turn();
        mma_wait(1);
        release(b_.k_empty(jj % st));
        softmax(jj);
        mma_wait(0);
        release(b_.v_empty((jj - 1) % st));
        rescale();
      }
      if (jj + 1 < n_) return;
      out.push_back(L::barrier_op(OpKind::kMbarWait, b_.v_full((n_ - 1) % st), (n_ - 1) / st));
      gemm(m, d, bn);
      mma_wait(0);
      release(b_.v_empty((n_ - 1) % st));
    } else {
      wait_full(b_.k_full(jj % st), jj);
      sync_turn();
      gemm(m, bn, d);
      pass_turn();
      mma_wait(0);
      release(b_.k_empty(jj % st));
      softmax(jj);
      if (jj > 0) rescale();
      out.push_back(L::barrier_op(OpKind::kMbarWait, b_.v_full(jj % st), jj / st));
      gemm(m, d, bn);
      mma_wait(0);
      release(b_.v_empty(jj % st));
      if (jj + 1 < n_) return;
    }
    // Epilogue: O scaled by 1/ℓ and written to shared memory (over the V buffers) by each group;
    // after the consumers' barrier the first one stores the tile by TMA; each stores its LSE rows.
    rescale();
    out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kO, m, d * s_.out_bytes));
    out.push_back(L::barrier_op(OpKind::kNamedSync, b_.epilogue(), wgs * kWarpGroupThreads));
    if (w == 0)
      out.push_back(L::tile(OpKind::kStore, Tensor::kO, bh_, s_.seq_q, d, s_.out_bytes, row0_, r_, 0, d));
    const std::uint64_t lo = std::min(r_, w * m), hi = std::min(r_, lo + m);
    if (hi > lo) out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kLse, bh_, row0_ + lo, hi - lo));
  }

 private:
  std::uint64_t n_block(std::uint64_t jj) const { return n_ - 1 - jj; }
  std::uint64_t cols(std::uint64_t jj) const { return std::min(s_.block_n, s_.seq_kv - n_block(jj) * s_.block_n); }
  // Waits until every consumer released the buffer's previous use, then expects and loads.
  void load_k(std::uint64_t jj, std::vector<TileOp>& out) const {
    const std::uint64_t s = jj % s_.stages, use = jj / s_.stages;
    if (use > 0) out.push_back(L::barrier_op(OpKind::kMbarWait, b_.k_empty(s), use - 1));
    const TileOp k = L::bulk(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh_, n_block(jj) * s_.block_n, cols(jj), true),
                          b_.k_full(s));
    out.push_back(L::barrier_op(OpKind::kMbarArrive, b_.k_full(s), 1, static_cast<std::uint32_t>(k.bytes())));
    out.push_back(k);
  }
  // FP8 (e4m3, V row-major): the producer warp group loads V into a staging buffer and transposes
  // it in shared memory (FA-3's Transpose_V: LDSM.T / STSM, a read and a write of the tile)
  // before it marks V full.
  void load_v(std::uint64_t jj, std::vector<TileOp>& out) const {
    const std::uint64_t s = jj % s_.stages, use = jj / s_.stages;
    if (use > 0) out.push_back(L::barrier_op(OpKind::kMbarWait, b_.v_empty(s), use - 1));
    const std::uint8_t land = s_.transpose_v ? b_.vt_full(s) : b_.v_full(s);
    const TileOp v =
        L::bulk(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh_, n_block(jj) * s_.block_n, cols(jj), true), land);
    out.push_back(L::barrier_op(OpKind::kMbarArrive, land, 1, static_cast<std::uint32_t>(v.bytes())));
    out.push_back(v);
    if (!s_.transpose_v) return;
    out.push_back(L::barrier_op(OpKind::kMbarWait, land, use));
    const core::Bytes row = s_.head_dim * s_.value_bytes;
    out.push_back(L::shared(OpKind::kSharedRead, Tensor::kV, s_.block_n, row));
    out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kV, s_.block_n, row));
    out.push_back(L::barrier_op(OpKind::kMbarArrive, b_.v_full(s), 1));
  }

  const Flash3Schedule& s_;
  const TensorLayout& layout_;
  Barriers b_;
  std::uint64_t bh_, row0_, r_, n_, off_;
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
    sh.mma_dtype = w_.dtype;  // FP8 wgmma at the device's fp8 rate (sm.mma.wgmma.fp8_scale)
    return sh;
  }
  std::vector<core::WarpGroupSpec> warp_groups() const override {
    const Flash3Registers regs = flash3_registers(s_.consumer_warpgroups);
    std::vector<core::WarpGroupSpec> g{{core::WarpRole::kProducer, 4, regs.producer}};
    for (std::uint32_t w = 0; w < s_.consumer_warpgroups; ++w) g.push_back({core::WarpRole::kConsumer, 4, regs.consumer});
    return g;
  }
  std::vector<std::uint32_t> mbarriers() const override {
    return Barriers{s_.stages, s_.consumer_warpgroups}.counts(s_.transpose_v);
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    return emit_group_step(cta, 0, step, out);
  }
  bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                       std::vector<TileOp>& out) const override {
    if (group > s_.consumer_warpgroups) return false;
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
    if (step >= blocks) return false;
    const TileStreams t(s_, layout_, bh, row0, r, blocks, off);
    if (group == 0) t.producer(step, out);
    else t.consumer(group - 1, step, out);
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
  const bool bwd = p.workload.pass == core::Pass::kFwdBwd;
  if (bwd) flash3_resolve_backward(p.workload, device);
  p.launches.push_back(std::make_unique<Flash3Fwd>(p.workload, flash3_schedule(p.workload)));
  if (bwd) flash3_append_backward(p, device);  // kernels/flash3_bwd.cpp
  return p;
}

}  // namespace attnsim::kernels
