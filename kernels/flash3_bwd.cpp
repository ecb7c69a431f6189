// FlashAttention-3 backward (arXiv 2407.08608 §3; Dao-AILab/flash-attention hopper/): preprocess
// (dPsum = rowsum(dO ∘ O), LSE scaled to log2, dQ_accum zeroed), one warp-specialized CTA per
// (batch, head, KV block) with async wgmma and dQ reduce-added in fp32 (its warp groups emit one
// step per query block), and the dQ conversion.
#include "kernels/flash3_bwd.h"

#include <algorithm>

#include "kernels/flash3.h"
#include "kernels/kernel_defaults.h"
#include "kernels/tensor_layout.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

namespace {

using core::OpKind;
using core::Tensor;
using core::TileOp;
using L = TensorLayout;

constexpr std::uint64_t kWarpGroupThreads = 128, kWarpThreads = 32;
constexpr core::Bytes kF32 = 4;


// The backward's geometry of a resolved workload: block_m / block_n are the backward's tile.
struct Geometry {
  std::uint64_t bm, bn, d, nq, nkv, t_r, t_c, bh_count, heads, kv_heads, batch;
  bool causal, gqa;
  core::Bytes v;
  explicit Geometry(const core::Workload& w)
      : bm(w.bwd_block_m), bn(w.bwd_block_n), d(w.head_dim), nq(w.seq_q), nkv(w.seq_kv),
        t_r(core::ceil_div(w.seq_q, w.bwd_block_m)), t_c(core::ceil_div(w.seq_kv, w.bwd_block_n)),
        bh_count(w.batch * w.heads), heads(w.heads), kv_heads(w.kv_heads ? w.kv_heads : w.heads), batch(w.batch),
        causal(w.causal), gqa(kv_heads != w.heads), v(w.value_bytes()) {}
  // get_m_block_min: the first query block that sees key block n (causal, bottom-right aligned).
  std::uint64_t m_first(std::uint64_t n) const {
    return causal ? KernelDefaults::causal_first_row(n * bn, nkv - nq, bm) / bm : 0;
  }
  std::uint64_t rows(std::uint64_t m) const { return std::min(bm, nq - m * bm); }
  std::uint64_t cols(std::uint64_t n) const { return std::min(bn, nkv - n * bn); }
  // FA-3 pads the per-row statistics and dQ_accum to whole query blocks (seqlen_q_rounded).
  std::uint64_t padded_q() const { return t_r * bm; }
  // Padded fp32 rows of `t` per (batch, head): LSE_log2 lives past the forward's LSE.
  TileOp stat_block(OpKind kind, Tensor t, std::uint64_t bh, std::uint64_t m, bool log2_copy = false) const {
    const std::uint64_t matrix = log2_copy ? bh_count + bh : bh;
    return L::tile(kind, t, matrix, 1, padded_q(), kF32, 0, 1, m * bm, bm);
  }
  // Part `part` of `parts` of query block m's fp32 dQ_accum, flat [batch, heads, padded_q * d].
  TileOp dq_accum(OpKind kind, std::uint64_t bh, std::uint64_t m, std::uint64_t part, std::uint64_t parts) const {
    const std::uint64_t len = bm * d / parts;
    return L::tile(kind, Tensor::kDQAccum, bh, 1, padded_q() * d, kF32, 0, 1, m * bm * d + part * len, len);
  }
  // GQA: the fp32 dK / dV accumulators per (batch, KV head), padded to whole key blocks, past
  // the per-query-head dK / dV rows of the same tensor.
  TileOp kv_accum(OpKind kind, Tensor t, std::uint64_t bg, std::uint64_t n) const {
    return L::tile(kind, t, bh_count + bg, 1, t_c * bn * d, kF32, 0, 1, n * bn * d, bn * d);
  }
};

core::Workload backward_view(const core::Workload& w) {
  core::Workload b = w;
  b.block_m = w.bwd_block_m;
  b.block_n = w.bwd_block_n;
  b.warps = w.bwd_warps;
  return b;
}

// The small launches' shape; 32 registers per thread (ptxas' count is not published; FA-3's
// pre- and postprocess kernels are element-wise) so threads and shared memory bound occupancy.
core::LaunchShape grid_shape(std::uint64_t x, std::uint64_t y, std::uint64_t z, std::uint32_t threads,
                             core::DType dtype) {
  core::LaunchShape s;
  s.grid_x = x;
  s.grid_y = y;
  s.grid_z = z;
  s.threads_per_cta = threads;
  s.regs_per_thread = 32;
  s.smem_dynamic_bytes = 0;
  s.mma_dtype = dtype;
  return s;
}

// flash_bwd_preprocess_kernel.h: one CTA per (query block, head, batch) of the main kernel's
// block_m rows: reads O, dO, LSE; writes dPsum and LSE·log2(e) for the whole padded block and
// zeroes the block's dQ_accum.
class Flash3BwdPreprocess : public core::KernelLaunch {
 public:
  explicit Flash3BwdPreprocess(const core::Workload& w) : w_(w), g_(w), layout_(w) {}
  std::string name() const override { return "flash3_bwd_preprocess"; }
  core::LaunchShape shape() const override { return grid_shape(g_.t_r, w_.heads, w_.batch, 256, w_.dtype); }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t bh = cta / g_.t_r, m = cta % g_.t_r, r = g_.rows(m);
    out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kO, bh, m * g_.bm, r));
    out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kDO, bh, m * g_.bm, r));
    out.push_back(layout_.stat_rows(OpKind::kLoad, Tensor::kLse, bh, m * g_.bm, r));
    out.push_back(L::count_op(OpKind::kElementwise, 2 * r * g_.d + r));
    out.push_back(g_.stat_block(OpKind::kStore, Tensor::kDelta, bh, m));
    out.push_back(g_.stat_block(OpKind::kStore, Tensor::kLse, bh, m, true));
    out.push_back(g_.dq_accum(OpKind::kStore, bh, m, 0, 1));
    return true;
  }

 private:
  core::Workload w_;
  Geometry g_;
  TensorLayout layout_;
};

// mbarriers of the main CTA: K and V full; per Q stage full / empty; per dO stage full / empty.
// Named barriers: 1 the consumers' P/dS barrier, 2 + w consumer w's dQ tile full, 2 + W + w
// its dQ tile empty, 2 + 2W the epilogue.
struct Barriers {
  std::uint32_t q_stages, do_stages, consumers;
  std::uint8_t kv_full() const { return 0; }
  std::uint8_t q_full(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + s); }
  std::uint8_t q_empty(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + q_stages + s); }
  std::uint8_t do_full(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + 2 * q_stages + s); }
  std::uint8_t do_empty(std::uint64_t s) const { return static_cast<std::uint8_t>(1 + 2 * q_stages + do_stages + s); }
  std::vector<std::uint32_t> counts() const {
    std::vector<std::uint32_t> c(1 + 2 * q_stages + 2 * do_stages, 1);
    for (std::uint32_t s = 0; s < q_stages; ++s) c[q_empty(s)] = consumers;
    for (std::uint32_t s = 0; s < do_stages; ++s) c[do_empty(s)] = consumers;
    return c;
  }
  std::uint8_t pds() const { return 1; }
  std::uint8_t dq_full(std::uint64_t w) const { return static_cast<std::uint8_t>(2 + w); }
  std::uint8_t dq_empty(std::uint64_t w) const { return static_cast<std::uint8_t>(2 + consumers + w); }
  std::uint8_t epilogue() const { return static_cast<std::uint8_t>(2 + 2 * consumers); }
};

// flash_bwd_kernel_sm90.h + mainloop_bwd_sm90_tma_gmma_ws.hpp. Warp groups: 0 the producer's
// load warp (TMA of K, V once, then per query block Q with its LSE and dO with its dPsum into
// ring buffers; the producer's two idle warps counted with it), 1 the producer's dQ warp (bulk
// reduce-add of each consumer's fp32 dQ tile from shared memory into dQ_accum), 2 + w consumer w.
// Consumers split the key block: each owns block_n / W keys of Sᵀ, dPᵀ, dV, dK and a 1/W share
// of dQ = dS K, whose dS comes from shared memory after the P/dS barrier.
class Flash3Bwd : public core::KernelLaunch {
 public:
  Flash3Bwd(const core::Workload& w, const Flash3BwdTile& t)
      : w_(w), g_(w), layout_(w), t_(t), b_{kFlash3BwdQStages, t.stages_do, t.warpgroups} {}
  std::string name() const override { return "flash3_bwd"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s = grid_shape(g_.t_c, w_.heads, w_.batch, w_.warps * 32, w_.dtype);
    s.regs_per_thread = w_.regs_per_thread;
    s.smem_dynamic_bytes = flash3_bwd_smem(t_, g_.d, g_.v);
    return s;
  }
  std::vector<core::WarpGroupSpec> warp_groups() const override {
    // flash_bwd_kernel_sm90.h: LoadRegisterRequirement / MmaRegisterRequirement.
    const std::uint32_t load = t_.warpgroups == 2 ? 24 : 32, mma = t_.warpgroups == 2 ? 240 : 160;
    std::vector<core::WarpGroupSpec> gs{{core::WarpRole::kProducer, 3, load}, {core::WarpRole::kProducer, 1, load}};
    for (std::uint32_t w = 0; w < t_.warpgroups; ++w) gs.push_back({core::WarpRole::kConsumer, 4, mma});
    return gs;
  }
  std::vector<std::uint32_t> mbarriers() const override { return b_.counts(); }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    return emit_group_step(cta, 0, step, out);
  }
  bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                       std::vector<TileOp>& out) const override {
    if (group >= 2 + t_.warpgroups) return false;
    // Causal: FA-3's LPT scheduler hands out the longest tiles first; key block 0 sees the most
    // query blocks, so key blocks go in increasing order (the same order when not causal).
    const std::uint64_t bh = cta / g_.t_c, n = cta % g_.t_c;
    const std::uint64_t m0 = g_.m_first(n), count = g_.t_r - m0;
    if (step >= std::max<std::uint64_t>(count, 1)) return false;  // one step per query block
    if (group == 0) producer(bh, n, m0, count, step, out);
    else if (group == 1) dq_writer(bh, m0, count, step, out);
    else consumer(group - 2, bh, n, m0, count, step, out);
    return true;
  }

 private:
  // Each group's step i: its work on query block m0 + i (the first step also loads K and V or
  // waits for them, the last one runs the epilogue).
  void producer(std::uint64_t bh, std::uint64_t n, std::uint64_t m0, std::uint64_t count, std::uint64_t i,
                std::vector<TileOp>& out) const {
    auto load_q = [&](std::uint64_t i) {
      const std::uint64_t s = i % b_.q_stages, use = i / b_.q_stages, m = m0 + i;
      if (use > 0) out.push_back(L::barrier_op(OpKind::kMbarWait, b_.q_empty(s), use - 1));
      const TileOp q = L::bulk(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, m * g_.bm, g_.rows(m), true), b_.q_full(s));
      const TileOp lse = L::bulk(g_.stat_block(OpKind::kLoad, Tensor::kLse, bh, m, true), b_.q_full(s));
      out.push_back(L::barrier_op(OpKind::kMbarArrive, b_.q_full(s), 1, static_cast<std::uint32_t>(q.bytes() + lse.bytes())));
      out.push_back(q);
      out.push_back(lse);
    };
    auto load_do = [&](std::uint64_t i) {
      const std::uint64_t s = i % b_.do_stages, use = i / b_.do_stages, m = m0 + i;
      if (use > 0) out.push_back(L::barrier_op(OpKind::kMbarWait, b_.do_empty(s), use - 1));
      const TileOp dout = L::bulk(layout_.q_rows(OpKind::kLoad, Tensor::kDO, bh, m * g_.bm, g_.rows(m), true), b_.do_full(s));
      const TileOp dpsum = L::bulk(g_.stat_block(OpKind::kLoad, Tensor::kDelta, bh, m), b_.do_full(s));
      out.push_back(L::barrier_op(OpKind::kMbarArrive, b_.do_full(s), 1,
                                 static_cast<std::uint32_t>(dout.bytes() + dpsum.bytes())));
      out.push_back(dout);
      out.push_back(dpsum);
    };
    if (i == 0) {
      load_q(0);
      const TileOp k = L::bulk(layout_.kv_rows(OpKind::kLoad, Tensor::kK, bh, n * g_.bn, g_.cols(n), true), b_.kv_full());
      const TileOp v = L::bulk(layout_.kv_rows(OpKind::kLoad, Tensor::kV, bh, n * g_.bn, g_.cols(n), true), b_.kv_full());
      out.push_back(L::barrier_op(OpKind::kMbarArrive, b_.kv_full(), 1, static_cast<std::uint32_t>(k.bytes() + v.bytes())));
      out.push_back(k);
      out.push_back(v);
    }
    if (i >= count) return;
    load_do(i);  // dO of block i, then Q of block i + 1
    if (i + 1 < count) load_q(i + 1);
  }

  // store_dq: per query block and consumer, wait for its dQ tile in shared memory, reduce-add it
  // into dQ_accum (SM90_BULK_REDUCE_ADD), and mark the buffer empty again.
  void dq_writer(std::uint64_t bh, std::uint64_t m0, std::uint64_t count, std::uint64_t i,
                 std::vector<TileOp>& out) const {
    const std::uint64_t pair = kWarpGroupThreads + kWarpThreads, wgs = t_.warpgroups;
    if (i == 0)
      for (std::uint64_t w = 0; w < wgs; ++w) out.push_back(L::barrier_op(OpKind::kNamedArrive, b_.dq_empty(w), pair));
    if (i >= count) return;
    for (std::uint64_t w = 0; w < wgs; ++w) {
      out.push_back(L::barrier_op(OpKind::kNamedSync, b_.dq_full(w), pair));
      out.push_back(g_.dq_accum(OpKind::kStore, bh, m0 + i, w, wgs));
      if (i + 1 < count) out.push_back(L::barrier_op(OpKind::kNamedArrive, b_.dq_empty(w), pair));
    }
  }

  void consumer(std::uint64_t w, std::uint64_t bh, std::uint64_t n, std::uint64_t m0, std::uint64_t count,
                std::uint64_t i, std::vector<TileOp>& out) const {
    const std::uint64_t wgs = t_.warpgroups, bm = g_.bm, d = g_.d, keys = g_.bn / wgs, e = bm * keys;
    const std::uint64_t all = wgs * kWarpGroupThreads, pair = kWarpGroupThreads + kWarpThreads;
    auto gemm = [&](std::uint64_t mm, std::uint64_t nn, std::uint64_t kk) {
      TileOp o = L::mma(mm, nn, kk);
      o.async = true;
      o.flavour = core::MmaFlavour::kWgmma;
      out.push_back(o);
      out.push_back(L::simple(OpKind::kMmaCommit));
    };
    auto mma_wait = [&](std::uint64_t pending) { out.push_back(L::count_op(OpKind::kMmaWait, pending)); };
    if (i == 0) out.push_back(L::barrier_op(OpKind::kMbarWait, b_.kv_full(), 0));
    // Masked blocks: the causal diagonal (SeparateMaskingIterations for d <= 64 masks only those;
    // the others run the same mask code) and a ragged last key or query block.
    const std::uint64_t col0 = n * g_.bn, off = g_.nkv - g_.nq;
    if (i < count) {
      const std::uint64_t m = m0 + i, qs = i % b_.q_stages, ds = i % b_.do_stages;
      const bool masked = g_.cols(n) < g_.bn || g_.rows(m) < bm || (g_.causal && col0 + g_.bn > m * bm + off + 1);
      out.push_back(L::barrier_op(OpKind::kMbarWait, b_.q_full(qs), i / b_.q_stages));
      gemm(keys, bm, d);  // Sᵀ = K Qᵀ (SdP_swapAB)
      out.push_back(L::barrier_op(OpKind::kMbarWait, b_.do_full(ds), i / b_.do_stages));
      gemm(keys, bm, d);  // dPᵀ = V dOᵀ
      mma_wait(1);
      out.push_back(L::count_op(OpKind::kElementwise, (masked ? 2 : 1) * e));  // S·scale - LSE (and mask)
      out.push_back(L::count_op(OpKind::kExp, e));                           // P = exp2(...)
      mma_wait(0);
      out.push_back(L::count_op(OpKind::kElementwise, 2 * e));  // dS = P ∘ (dP - dPsum)
      if (!t_.dkv_rs()) out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kP, keys, bm * g_.v));
      out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kDS, keys, bm * g_.v));
      gemm(keys, d, bm);  // dV += Pᵀ dO
      out.push_back(L::barrier_op(OpKind::kNamedSync, b_.pds(), all));
      gemm(bm, d / wgs, g_.bn);  // dQ = dS K, this group's share
      mma_wait(1);
      out.push_back(L::barrier_op(OpKind::kMbarArrive, b_.do_empty(ds), 1));
      gemm(keys, d, bm);  // dK += dSᵀ Q
      mma_wait(1);
      out.push_back(L::barrier_op(OpKind::kNamedSync, b_.dq_empty(w), pair));
      out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kDQAccum, bm, d / wgs * kF32));
      out.push_back(L::barrier_op(OpKind::kNamedArrive, b_.dq_full(w), pair));
      mma_wait(0);
      out.push_back(L::barrier_op(OpKind::kMbarArrive, b_.q_empty(qs), 1));
    }
    if (i + 1 < count) return;
    // Epilogue: dK scaled by the softmax scale; dK, dV through shared memory, stored by TMA (MHA)
    // or reduce-added in fp32 into the KV head's accumulators (GQA, CollectiveEpilogueBwdGQA).
    out.push_back(L::count_op(OpKind::kElementwise, keys * d));
    const core::Bytes row = d * (g_.gqa ? kF32 : g_.v);
    out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kDV, keys, row));
    out.push_back(L::shared(OpKind::kSharedWrite, Tensor::kDK, keys, row));
    out.push_back(L::barrier_op(OpKind::kNamedSync, b_.epilogue(), all));
    if (w != 0) return;
    for (Tensor t : {Tensor::kDV, Tensor::kDK}) {
      if (g_.gqa) out.push_back(g_.kv_accum(OpKind::kStore, t, layout_.kv_matrix(bh), n));
      else out.push_back(layout_.grad_kv_rows(OpKind::kStore, t, bh, col0, g_.cols(n)));
    }
  }

  core::Workload w_;
  Geometry g_;
  TensorLayout layout_;
  Flash3BwdTile t_;
  Barriers b_;
};

// flash_bwd_postprocess_kernel.h: per query block, dQ_accum (the padded block) to dQ in the
// workload dtype (scaled by the softmax scale); the main kernel's MMA threads (kNThreads =
// NumMmaThreads), shared memory for the fp32 tile and the converted one (SharedStorage).
core::LaunchShape convert_shape(const Geometry& g, std::uint64_t blocks, std::uint64_t rows, std::uint64_t y,
                                std::uint64_t z, std::uint32_t threads, core::DType dtype) {
  core::LaunchShape s = grid_shape(blocks, y, z, threads, dtype);
  s.smem_dynamic_bytes = rows * g.d * (kF32 + g.v);
  return s;
}

class Flash3BwdPostprocess : public core::KernelLaunch {
 public:
  Flash3BwdPostprocess(const core::Workload& w, std::uint32_t threads) : w_(w), g_(w), layout_(w), threads_(threads) {}
  std::string name() const override { return "flash3_bwd_postprocess"; }
  core::LaunchShape shape() const override {
    return convert_shape(g_, g_.t_r, g_.bm, w_.heads, w_.batch, threads_, w_.dtype);
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t bh = cta / g_.t_r, m = cta % g_.t_r, r = g_.rows(m);
    out.push_back(g_.dq_accum(OpKind::kLoad, bh, m, 0, 1));
    out.push_back(L::count_op(OpKind::kElementwise, r * g_.d));
    out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kDQ, bh, m * g_.bm, r));
    return true;
  }

 private:
  core::Workload w_;
  Geometry g_;
  TensorLayout layout_;
  std::uint32_t threads_;
};

// GQA: the same conversion per key block of the fp32 dK or dV accumulator (one launch each;
// kNThreads = the GQA epilogue's threads, the MMA threads).
class Flash3BwdConvertKv : public core::KernelLaunch {
 public:
  Flash3BwdConvertKv(const core::Workload& w, Tensor t, std::uint32_t threads)
      : w_(w), g_(w), t_(t), threads_(threads) {}
  std::string name() const override { return t_ == Tensor::kDK ? "flash3_bwd_convert_dk" : "flash3_bwd_convert_dv"; }
  core::LaunchShape shape() const override {
    return convert_shape(g_, g_.t_c, g_.bn, g_.kv_heads, w_.batch, threads_, w_.dtype);
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t bg = cta / g_.t_c, n = cta % g_.t_c, c = g_.cols(n);
    out.push_back(g_.kv_accum(OpKind::kLoad, t_, bg, n));
    out.push_back(L::count_op(OpKind::kElementwise, c * g_.d));
    // dK / dV of KV head bg: [batch, kv_heads, seq_kv, d] rows.
    out.push_back(L::tile(OpKind::kStore, t_, bg, g_.nkv, g_.d, g_.v, n * g_.bn, c, 0, g_.d));
    return true;
  }

 private:
  core::Workload w_;
  Geometry g_;
  Tensor t_;
  std::uint32_t threads_;
};

}  // namespace

Flash3BwdTile flash3_bwd_default_tile(std::uint64_t d, bool causal) {
  // flash_bwd_launch_template.h, run_mha_bwd_hdim{64,96,128,192,256}, Arch >= 90, no softcap:
  // <kBlockM, kBlockN, Stages_dO, Stages_dS, SdP_swapAB, dKV_swapAB, dQ_swapAB,
  //  NumMmaWarpGroups, AtomLayoutMSdP, AtomLayoutNdKV, AtomLayoutMdQ, V_in_regs>.
  if (d <= 64) return {128, 128, 2, 2, true, false, false, 2, 1, 2, 2, false};
  if (d <= 96) return {64, 128, 2, 2, true, false, false, 2, 1, 2, 1, true};
  if (d <= 128) {
    if (causal) return {64, 128, 2, 2, true, false, false, 2, 1, 2, 1, false};
    return {80, 128, 2, 2, true, false, true, 2, 1, 2, 1, false};
  }
  if (d <= 192) return {64, 96, 1, 1, false, true, false, 3, 1, 1, 1, false};
  return {64, 80, 1, 1, false, true, true, 2, 1, 1, 1, false};
}

core::Bytes flash3_bwd_smem(const Flash3BwdTile& t, std::uint64_t d, core::Bytes v) {
  // TensorStorage: K, V; the fp32 dQ tile (dQacc_use_TMA: head dim < 256); Q and its LSE per Q
  // stage; dO and its dPsum per dO stage; P (unless Mma_dKV_is_RS) and dS per dS stage.
  const core::Bytes m = t.block_m, n = t.block_n;
  const core::Bytes kv = 2 * n * d * v, dq = d < 256 ? m * d * kF32 : 0;
  const core::Bytes q = kFlash3BwdQStages * m * (d * v + kF32), dout = t.stages_do * m * (d * v + kF32);
  const core::Bytes pds = (t.dkv_rs() ? 1 : 2) * t.stages_ds * m * n * v;
  return kv + dq + q + dout + pds;
}

void flash3_resolve_backward(core::Workload& w, const core::DeviceSpec& device) {
  if (w.dtype == core::DType::kFp8)
    throw core::ConfigError(core::ConfigProblem{"", 0, "pass", "FA-3's backward runs fp16 or bf16 (it has no fp8 backward)"});
  const Flash3BwdTile t = flash3_bwd_default_tile(w.head_dim, w.causal);
  w.bwd_block_m = t.block_m;
  w.bwd_block_n = t.block_n;
  w.bwd_warps = 4 * (t.warpgroups + 1);
  KernelDefaults::check_smem(flash3_bwd_smem(t, w.head_dim, w.value_bytes()), device, "head_dim",
                             "flash3 backward tiles " + std::to_string(t.block_m) + "x" + std::to_string(t.block_n));
}

void flash3_append_backward(core::TileProgram& p, const core::DeviceSpec& device) {
  core::Workload b = backward_view(p.workload);
  // setmaxnreg moves registers within the allocation (one CTA per SM, like the forward).
  const std::uint32_t per_block = device.sm.max_registers_per_block ? device.sm.max_registers_per_block : 65536;
  const std::uint32_t cap = device.sm.max_registers_per_thread ? device.sm.max_registers_per_thread : 255;
  b.regs_per_thread = std::min<std::uint32_t>(cap, per_block / (b.warps * 32)) / 8 * 8;
  const Flash3BwdTile t = flash3_bwd_default_tile(b.head_dim, b.causal);
  p.launches.push_back(std::make_unique<Flash3BwdPreprocess>(b));
  p.launches.push_back(std::make_unique<Flash3Bwd>(b, t));
  const std::uint32_t mma_threads = t.warpgroups * 128;
  p.launches.push_back(std::make_unique<Flash3BwdPostprocess>(b, mma_threads));
  if (Geometry(b).gqa) {
    p.launches.push_back(std::make_unique<Flash3BwdConvertKv>(b, Tensor::kDK, mma_threads));
    p.launches.push_back(std::make_unique<Flash3BwdConvertKv>(b, Tensor::kDV, mma_threads));
  }
}

std::vector<core::LaunchTraffic> flash3_fwdbwd_traffic(const core::Workload& w, bool compulsory) {
  std::vector<core::LaunchTraffic> out = core::flash3_traffic(w, compulsory);
  if (w.pass != core::Pass::kFwdBwd) return out;
  // Counted from FA-3's launches (docs/kernels.md, flash3 backward), independently of the op
  // streams: per (batch, head) the query blocks each key block visits.
  const Geometry g(w);
  const std::uint64_t bh = g.bh_count, bg = g.batch * g.kv_heads, q_row = g.d * g.v, stat = g.padded_q() * kF32;
  std::uint64_t visits = 0, rows = 0;  // Σ over key blocks of the query blocks / rows they see
  for (std::uint64_t n = 0; n < g.t_c; ++n) {
    const std::uint64_t first = g.causal && n * g.bn > g.nkv - g.nq ? (n * g.bn - (g.nkv - g.nq)) / g.bm : 0;
    visits += g.t_r - first;
    rows += g.nq - first * g.bm;
  }
  core::LaunchTraffic pre{"flash3_bwd_preprocess", {}};
  pre.traffic[Tensor::kO].read = bh * g.nq * q_row;
  pre.traffic[Tensor::kDO].read = bh * g.nq * q_row;
  pre.traffic[Tensor::kLse] = {bh * g.nq * kF32, bh * stat};
  pre.traffic[Tensor::kDelta].write = bh * stat;
  pre.traffic[Tensor::kDQAccum].write = bh * stat * g.d;
  out.push_back(pre);

  core::LaunchTraffic main{"flash3_bwd", {}};
  const std::uint64_t kv_reads = (compulsory ? bg : bh) * g.nkv * q_row;
  main.traffic[Tensor::kK].read = kv_reads;
  main.traffic[Tensor::kV].read = kv_reads;
  main.traffic[Tensor::kQ].read = bh * (compulsory ? g.nq : rows) * q_row;
  main.traffic[Tensor::kDO].read = main.traffic[Tensor::kQ].read;
  main.traffic[Tensor::kLse].read = bh * (compulsory ? g.t_r : visits) * g.bm * kF32;
  main.traffic[Tensor::kDelta].read = main.traffic[Tensor::kLse].read;
  main.traffic[Tensor::kDQAccum].write = bh * (compulsory ? g.t_r : visits) * g.bm * g.d * kF32;
  const std::uint64_t acc = g.t_c * g.bn * g.d * kF32;  // one KV head's padded fp32 accumulator
  for (Tensor t : {Tensor::kDK, Tensor::kDV})
    main.traffic[t].write = g.gqa ? (compulsory ? bg : bh) * acc : bh * g.nkv * q_row;
  out.push_back(main);

  core::LaunchTraffic post{"flash3_bwd_postprocess", {}};
  post.traffic[Tensor::kDQAccum].read = bh * stat * g.d;
  post.traffic[Tensor::kDQ].write = bh * g.nq * q_row;
  out.push_back(post);
  if (g.gqa) {
    for (Tensor t : {Tensor::kDK, Tensor::kDV}) {
      core::LaunchTraffic cv{t == Tensor::kDK ? "flash3_bwd_convert_dk" : "flash3_bwd_convert_dv", {}};
      cv.traffic[t] = {bg * acc, bg * g.nkv * q_row};
      out.push_back(cv);
    }
  }
  return out;
}

}  // namespace attnsim::kernels
