#include "sim/core/io_counts.h"

#include <algorithm>
#include <utility>

// Closed forms, written as products and sums over the kernels' documented schedules
// (docs/kernels.md). Causal block counts use floor sums (Σ floor((a·i + b)/m)) evaluated
// with the Euclid-like recursion, so the cost does not grow with the number of blocks.

namespace attnsim::core {

namespace {

constexpr Bytes kStatBytes = 4;  // m, ℓ, LSE, Delta, partial LSE: fp32 per row
constexpr Bytes kAccBytes = 4;   // dQ_accum and O_partial: fp32

// Σ_{i=0}^{n-1} floor((a·i + b) / m), a, b ≥ 0, m > 0.
std::uint64_t floor_sum(std::uint64_t n, std::uint64_t m, std::uint64_t a, std::uint64_t b) {
  std::uint64_t ans = 0;
  while (n > 0) {
    if (a >= m) {
      ans += (n * (n - 1) / 2) * (a / m);
      a %= m;
    }
    if (b >= m) {
      ans += n * (b / m);
      b %= m;
    }
    const std::uint64_t y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
  return ans;
}

// Row blocks of `bm` rows over `rows`; each block i needs the first x_i columns of `cols`,
// rounded up to `div`: x_i = min(cols, div·ceil((end_i + off) / div)) when causal, where end_i
// is one past the block's last row and off = cols - rows; x_i = cols otherwise.
// n_i = ceil(x_i / div) blocks of columns.
struct PrefixSums {
  std::uint64_t sum_x = 0, sum_rx = 0, sum_n = 0, sum_rn = 0;
};

PrefixSums prefix_sums(std::uint64_t rows, std::uint64_t bm, std::uint64_t cols, std::uint64_t div, bool causal) {
  const std::uint64_t t = ceil_div(rows, bm), tk = ceil_div(cols, div);
  const std::uint64_t r_last = rows - (t - 1) * bm;
  PrefixSums p;
  if (!causal) {
    p.sum_x = t * cols;
    p.sum_rx = rows * cols;
    p.sum_n = t * tk;
    p.sum_rn = rows * tk;
    return p;
  }
  const std::uint64_t off = cols - rows;
  // Blocks i < i_star (all full, i < t-1) need fewer than tk column blocks.
  std::uint64_t i_star = 0;
  if ((tk - 1) * div >= off + bm) i_star = std::min(t - 1, ((tk - 1) * div - off) / bm);
  const std::uint64_t s = floor_sum(i_star, div, bm, bm + off + div - 1);  // Σ_{i<i*} n_i
  p.sum_n = s + (t - i_star) * tk;
  p.sum_x = div * s + (t - i_star) * cols;
  p.sum_rn = bm * (s + (t - 1 - i_star) * tk) + r_last * tk;
  p.sum_rx = bm * (div * s + (t - 1 - i_star) * cols) + r_last * cols;
  return p;
}

// Row blocks of `bm` rows over `rows` (keys); block i needs the other dimension (`other`
// query rows) from y_i = div·floor(max(0, start_i - off) / div) to the end, off = rows - other,
// when causal; from 0 otherwise. Returns Σ (other - y_i) and Σ r_i·(other - y_i).
struct SuffixSums {
  std::uint64_t sum_len = 0, sum_rlen = 0;
};

SuffixSums suffix_sums(std::uint64_t rows, std::uint64_t bm, std::uint64_t other, std::uint64_t div, bool causal) {
  const std::uint64_t t = ceil_div(rows, bm);
  const std::uint64_t r_last = rows - (t - 1) * bm;
  SuffixSums s;
  s.sum_len = t * other;
  s.sum_rlen = rows * other;
  if (!causal) return s;
  const std::uint64_t off = rows - other;
  const std::uint64_t i0 = ceil_div(off, bm);
  std::uint64_t sum_y = 0, y_last = 0;
  if (i0 < t) {
    sum_y = div * floor_sum(t - i0, div, bm, i0 * bm - off);
    y_last = div * (((t - 1) * bm - off) / div);
  }
  s.sum_len -= sum_y;
  s.sum_rlen -= bm * (sum_y - y_last) + r_last * y_last;
  return s;
}

struct Shape {
  std::uint64_t b, h, g, nq, nkv, d, v;
  std::uint64_t bh() const { return b * h; }
  std::uint64_t bg() const { return b * g; }
};

Shape shape_of(const Workload& w) {
  return Shape{w.batch, w.heads, w.kv_heads ? w.kv_heads : w.heads, w.seq_q, w.seq_kv, w.head_dim, w.value_bytes()};
}

LaunchTraffic launch(std::string name) { return LaunchTraffic{std::move(name), {}}; }

// GEMM C[M×N] = A·Bᵀ-style with output tiles skipped above the diagonal (S = QKᵀ, dP = dO·Vᵀ).
LaunchTraffic gemm_scores(const std::string& name, const Shape& s, const Workload& w, Tensor a, Tensor bt,
                          Tensor c, bool compulsory) {
  const PrefixSums p = prefix_sums(s.nq, w.block_m, s.nkv, w.block_n, w.causal);
  // 2-CTA clusters: column tiles (i, 2p) and (i, 2p+1) load the A tile once between them, so
  // row block i loads it ceil(n_i / 2) times; ceil(ceil(y / bn) / 2) = ceil(y / 2bn).
  const std::uint64_t a_rows =
      w.gemm_cluster == 2 ? prefix_sums(s.nq, w.block_m, s.nkv, 2 * w.block_n, w.causal).sum_rn : p.sum_rn;
  LaunchTraffic l = launch(name);
  l.traffic[a].read = s.bh() * (compulsory ? s.nq : a_rows) * s.d * s.v;
  l.traffic[bt].read = compulsory ? s.bg() * s.nkv * s.d * s.v : s.bh() * p.sum_x * s.d * s.v;
  l.traffic[c].write = s.bh() * p.sum_rx * s.v;
  return l;
}

// GEMM C[Nq×d] = A[Nq×Nkv]·B[Nkv×d], k-loop over keys cut at the diagonal (O = PV, dQ = dS·K).
LaunchTraffic gemm_rows(const std::string& name, const Shape& s, const Workload& w, Tensor a, Tensor b, Tensor c,
                        bool compulsory) {
  const PrefixSums p = prefix_sums(s.nq, w.block_m, s.nkv, w.block_k, w.causal);
  const std::uint64_t t_d = ceil_div(s.d, w.block_n);
  // 2-CTA clusters: row blocks 2p and 2p+1 load B's common keys once between them, so the pair
  // loads x_{2p+1} keys (the longer prefix), a lone last block its own: one block of 2·bm rows.
  const std::uint64_t b_keys =
      w.gemm_cluster == 2 ? prefix_sums(s.nq, 2 * w.block_m, s.nkv, w.block_k, w.causal).sum_x : p.sum_x;
  LaunchTraffic l = launch(name);
  l.traffic[a].read = s.bh() * p.sum_rx * s.v * (compulsory ? 1 : t_d);
  l.traffic[b].read = compulsory ? s.bg() * s.nkv * s.d * s.v : s.bh() * b_keys * s.d * s.v;
  l.traffic[c].write = s.bh() * s.nq * s.d * s.v;
  return l;
}

// GEMM C[Nkv×d] = Aᵀ·B with A[Nq×Nkv], B[Nq×d]; k-loop over queries from the diagonal on
// (dV = Pᵀ·dO, dK = dSᵀ·Q). C is written per query head.
LaunchTraffic gemm_keys(const std::string& name, const Shape& s, const Workload& w, Tensor a, Tensor b, Tensor c,
                        bool compulsory) {
  const SuffixSums q = suffix_sums(s.nkv, w.block_m, s.nq, w.block_k, w.causal);
  const std::uint64_t t_d = ceil_div(s.d, w.block_n);
  // 2-CTA clusters: key blocks 2p and 2p+1 load B's common query rows once between them, so the
  // pair loads block 2p's suffix (the longer one): one block of 2·bm rows starting where 2p does.
  const std::uint64_t b_rows =
      w.gemm_cluster == 2 ? suffix_sums(s.nkv, 2 * w.block_m, s.nq, w.block_k, w.causal).sum_len : q.sum_len;
  LaunchTraffic l = launch(name);
  l.traffic[a].read = s.bh() * q.sum_rlen * s.v * (compulsory ? 1 : t_d);
  l.traffic[b].read = s.bh() * (compulsory ? s.nq : b_rows) * s.d * s.v;
  l.traffic[c].write = s.bh() * s.nkv * s.d * s.v;
  return l;
}

// Row-wise kernel over the score-shaped tensors: each row touches the columns the score GEMM wrote.
LaunchTraffic rowwise(const std::string& name, const Shape& s, const Workload& w, std::initializer_list<Tensor> reads,
                      Tensor write) {
  const PrefixSums p = prefix_sums(s.nq, w.block_m, s.nkv, w.block_n, w.causal);
  LaunchTraffic l = launch(name);
  for (Tensor t : reads) l.traffic[t].read = s.bh() * p.sum_rx * s.v;
  l.traffic[write].write = s.bh() * p.sum_rx * s.v;
  // PyTorch's three-pass forward reads its row three times (softmax_three_pass); before 2.7 the
  // backward reads its gradient (the last input) twice (softmax_backward_rereads).
  if (reads.size() == 1 && softmax_three_pass(w, s.nkv, s.v)) l.traffic[*reads.begin()].read *= 3;
  if (reads.size() == 2 && softmax_backward_rereads(w, s.nkv, s.v)) l.traffic[*(reads.end() - 1)].read *= 2;
  return l;
}

// Elementwise over whole [rows × cols] matrices, one per query head: every value of each input
// read, every value of the output written (eager PyTorch's causal mask, in place on S / dS; the
// product dP∘P of the softmax backward, written over dP; AccumulateGrad's copy of dK, in place).
LaunchTraffic elementwise(const std::string& name, const Shape& s, std::initializer_list<Tensor> reads, Tensor write,
                          std::uint64_t rows, std::uint64_t cols) {
  LaunchTraffic l = launch(name);
  for (Tensor t : reads) l.traffic[t].read = s.bh() * rows * cols * s.v;
  l.traffic[write].write = s.bh() * rows * cols * s.v;
  return l;
}

// Eager PyTorch: every launch covers the whole score matrix; causal adds the mask kernels.
std::vector<LaunchTraffic> standard(const Workload& causal_w, bool c) {
  Workload w = causal_w;
  w.causal = false;
  const Shape s = shape_of(w);
  std::vector<LaunchTraffic> out;
  if (w.qkv_packed) {  // the layout copies of a packed qkv (kv_heads = heads)
    out.push_back(elementwise("standard_q_copy", s, {Tensor::kQ}, Tensor::kQ, s.nq, s.d));
    out.push_back(elementwise("standard_k_copy", s, {Tensor::kK}, Tensor::kK, s.nkv, s.d));
  }
  out.push_back(gemm_scores("standard_qk", s, w, Tensor::kQ, Tensor::kK, Tensor::kS, c));
  // A mask kernel also reads the [N_q, N_kv] mask, once per query head (one matrix shared by all;
  // compulsory: once per launch): bool, or with a packed qkv the benchmark's mask in S's dtype.
  auto mask = [&](LaunchTraffic l, Bytes bytes = 1) {
    l.traffic[Tensor::kMask].read = (c ? 1 : s.bh()) * s.nq * s.nkv * bytes;
    return l;
  };
  // The packed benchmark builds its mask on every call: fp32 full, fp32 triu, the cast to S's dtype.
  auto build = [&](const char* name, Bytes read, Bytes write) {
    LaunchTraffic l = launch(name);
    l.traffic[Tensor::kMask].read = s.nq * s.nkv * read;
    l.traffic[Tensor::kMask].write = s.nq * s.nkv * write;
    return l;
  };
  if (w.scale_kernel) out.push_back(elementwise("standard_scale", s, {Tensor::kS}, Tensor::kS, s.nq, s.nkv));
  if (causal_w.causal && w.qkv_packed) {
    out.push_back(build("standard_mask_full", 0, 4));
    out.push_back(build("standard_mask_triu", 4, 4));
    if (s.v != 4) out.push_back(build("standard_mask_cast", 4, s.v));
    out.push_back(mask(elementwise("standard_mask", s, {Tensor::kS}, Tensor::kS, s.nq, s.nkv), s.v));
  } else if (causal_w.causal) {
    out.push_back(mask(elementwise("standard_mask", s, {Tensor::kS}, Tensor::kS, s.nq, s.nkv)));
  }
  out.push_back(rowwise("standard_softmax", s, w, {Tensor::kS}, Tensor::kP));
  if (w.qkv_packed) out.push_back(elementwise("standard_v_copy", s, {Tensor::kV}, Tensor::kV, s.nkv, s.d));
  out.push_back(gemm_rows("standard_pv", s, w, Tensor::kP, Tensor::kV, Tensor::kO, c));
  if (w.pass == Pass::kFwdBwd) {
    out.push_back(gemm_scores("standard_bwd_dp", s, w, Tensor::kDO, Tensor::kV, Tensor::kDP, c));
    out.push_back(gemm_keys("standard_bwd_dv", s, w, Tensor::kP, Tensor::kDO, Tensor::kDV, c));
    out.push_back(elementwise("standard_bwd_softmax_mul", s, {Tensor::kDP, Tensor::kP}, Tensor::kDP, s.nq, s.nkv));
    out.push_back(rowwise("standard_bwd_softmax", s, w, {Tensor::kP, Tensor::kDP}, Tensor::kDS));
    if (causal_w.causal && !w.qkv_packed)  // a packed qkv's additive mask has no backward kernel
      out.push_back(mask(elementwise("standard_bwd_mask", s, {Tensor::kDS}, Tensor::kDS, s.nq, s.nkv)));
    if (w.scale_kernel) out.push_back(elementwise("standard_bwd_scale", s, {Tensor::kDS}, Tensor::kDS, s.nq, s.nkv));
    out.push_back(gemm_rows("standard_bwd_dq", s, w, Tensor::kDS, Tensor::kK, Tensor::kDQ, c));
    if (w.qkv_packed) out.push_back(elementwise("standard_bwd_dq_scale", s, {Tensor::kDQ}, Tensor::kDQ, s.nq, s.d));
    out.push_back(gemm_keys("standard_bwd_dk", s, w, Tensor::kDS, Tensor::kQ, Tensor::kDK, c));
    if (w.qkv_packed) {  // baddbmm's alpha on dK, then the stack of dq, dk, dv into the packed gradient
      out.push_back(elementwise("standard_bwd_dk_scale", s, {Tensor::kDK}, Tensor::kDK, s.nkv, s.d));
      out.push_back(elementwise("standard_bwd_dq_copy", s, {Tensor::kDQ}, Tensor::kDQ, s.nq, s.d));
      out.push_back(elementwise("standard_bwd_dk_copy", s, {Tensor::kDK}, Tensor::kDK, s.nkv, s.d));
      out.push_back(elementwise("standard_bwd_dv_copy", s, {Tensor::kDV}, Tensor::kDV, s.nkv, s.d));
    } else {
      out.push_back(elementwise("standard_bwd_dk_copy", s, {Tensor::kDK}, Tensor::kDK, s.nkv, s.d));
    }
  }
  return out;
}

std::vector<LaunchTraffic> flash1(const Workload& w, bool c) {
  const Shape s = shape_of(w);
  const std::uint64_t q_row = s.d * s.v;
  std::vector<LaunchTraffic> out;
  LaunchTraffic init = launch("flash1_init");
  init.traffic[Tensor::kO].write = s.bh() * s.nq * q_row;
  init.traffic[Tensor::kM].write = s.bh() * s.nq * kStatBytes;
  init.traffic[Tensor::kL].write = s.bh() * s.nq * kStatBytes;
  out.push_back(init);
  // Outer loop over key blocks (B_c = block_n), inner over the query blocks (B_r = block_m)
  // that see the key block: Σ_j (query rows visited).
  const std::uint64_t rows = c ? s.nq : suffix_sums(s.nkv, w.block_n, s.nq, w.block_m, w.causal).sum_len;
  LaunchTraffic f = launch("flash1_fwd");
  f.traffic[Tensor::kK].read = c ? s.bg() * s.nkv * q_row : s.bh() * s.nkv * q_row;
  f.traffic[Tensor::kV].read = f.traffic[Tensor::kK].read;
  f.traffic[Tensor::kQ].read = s.bh() * rows * q_row;
  f.traffic[Tensor::kO] = {s.bh() * rows * q_row, s.bh() * rows * q_row};
  f.traffic[Tensor::kM] = {s.bh() * rows * kStatBytes, s.bh() * rows * kStatBytes};
  f.traffic[Tensor::kL] = f.traffic[Tensor::kM];
  out.push_back(f);
  if (w.pass != Pass::kFwdBwd) return out;

  // Algorithm 4 (Theorem 5 accounting): line 5 zeroes dQ, dK, dV in HBM; then per outer step j
  // K_j, V_j read once, and for every query block i that sees block j: Q_i, O_i, dO_i, dQ_i,
  // ℓ_i, m_i read and dQ_i written (dQ in the workload dtype); dK_j, dV_j written once.
  LaunchTraffic bi = launch("flash1_bwd_init");
  bi.traffic[Tensor::kDQ].write = s.bh() * s.nq * q_row;
  bi.traffic[Tensor::kDK].write = s.bh() * s.nkv * q_row;
  bi.traffic[Tensor::kDV].write = s.bh() * s.nkv * q_row;
  out.push_back(bi);
  LaunchTraffic b = launch("flash1_bwd");
  b.traffic[Tensor::kK].read = f.traffic[Tensor::kK].read;
  b.traffic[Tensor::kV].read = f.traffic[Tensor::kK].read;
  for (Tensor t : {Tensor::kQ, Tensor::kO, Tensor::kDO}) b.traffic[t].read = s.bh() * rows * q_row;
  b.traffic[Tensor::kDQ] = {s.bh() * rows * q_row, s.bh() * rows * q_row};
  b.traffic[Tensor::kL].read = s.bh() * rows * kStatBytes;
  b.traffic[Tensor::kM].read = s.bh() * rows * kStatBytes;
  b.traffic[Tensor::kDK].write = s.bh() * s.nkv * q_row;
  b.traffic[Tensor::kDV].write = s.bh() * s.nkv * q_row;
  out.push_back(b);
  return out;
}

std::vector<LaunchTraffic> flash2(const Workload& w, bool c) {
  const Shape s = shape_of(w);
  const std::uint64_t q_row = s.d * s.v;
  const bool bwd = w.pass == Pass::kFwdBwd;
  std::vector<LaunchTraffic> out;
  LaunchTraffic f = launch("flash2_fwd");
  // The forward on FA-2's packed view when it swaps a GQA group into query rows (one query
  // token): K/V per KV head, once per (batch, KV head) CTA; Q, O, LSE bytes unchanged.
  const Workload fw = packed_query_groups(w);
  const Shape fs = shape_of(fw);
  const PrefixSums p = prefix_sums(fs.nq, fw.block_m, fs.nkv, fw.block_n, fw.causal);
  f.traffic[Tensor::kQ].read = s.bh() * s.nq * q_row;
  f.traffic[Tensor::kK].read = c ? s.bg() * s.nkv * q_row : fs.bh() * p.sum_x * q_row;
  f.traffic[Tensor::kV].read = f.traffic[Tensor::kK].read;
  f.traffic[Tensor::kO].write = s.bh() * s.nq * q_row;
  f.traffic[Tensor::kLse].write = s.bh() * s.nq * kStatBytes;  // written by forward-only runs too
  // Stack frames (register spills): each CTA writes its threads' frames once. Distinct bytes in
  // the op stream: one CTA's frames (the engine gives each resident slot its own copy).
  const std::uint64_t frames = static_cast<std::uint64_t>(w.warps) * 32 * w.stack_frame_bytes;
  f.traffic[Tensor::kLocal].write = c ? frames : fs.bh() * ceil_div(fs.nq, fw.block_m) * frames;
  out.push_back(f);
  if (!bwd) return out;
  // The backward's own tile (FA-2's Flash_bwd_kernel_traits), resolved by the kernel.
  const std::uint64_t bbm = w.bwd_block_m ? w.bwd_block_m : w.block_m;
  const std::uint64_t bbn = w.bwd_block_n ? w.bwd_block_n : w.block_n;

  LaunchTraffic pre = launch("flash2_bwd_preprocess");
  pre.traffic[Tensor::kDO].read = s.bh() * s.nq * q_row;
  pre.traffic[Tensor::kO].read = s.bh() * s.nq * q_row;
  pre.traffic[Tensor::kDelta].write = s.bh() * s.nq * kStatBytes;
  pre.traffic[Tensor::kDQAccum].write = s.bh() * s.nq * s.d * kAccBytes;
  out.push_back(pre);

  // One CTA per key block (block_n rows); inner loop over the query blocks (block_m) that see it.
  const std::uint64_t rows = c ? s.nq : suffix_sums(s.nkv, bbn, s.nq, bbm, w.causal).sum_len;
  LaunchTraffic b = launch("flash2_bwd");
  b.traffic[Tensor::kK].read = (c ? s.bg() : s.bh()) * s.nkv * q_row;
  b.traffic[Tensor::kV].read = b.traffic[Tensor::kK].read;
  b.traffic[Tensor::kQ].read = s.bh() * rows * q_row;
  b.traffic[Tensor::kDO].read = s.bh() * rows * q_row;
  b.traffic[Tensor::kLse].read = s.bh() * rows * kStatBytes;
  b.traffic[Tensor::kDelta].read = s.bh() * rows * kStatBytes;
  b.traffic[Tensor::kDQAccum].write = s.bh() * rows * s.d * kAccBytes;  // atomicAdd: one request per value
  b.traffic[Tensor::kDK].write = s.bh() * s.nkv * q_row;
  b.traffic[Tensor::kDV].write = s.bh() * s.nkv * q_row;
  out.push_back(b);

  LaunchTraffic cv = launch("flash2_bwd_convert_dq");
  cv.traffic[Tensor::kDQAccum].read = s.bh() * s.nq * s.d * kAccBytes;
  cv.traffic[Tensor::kDQ].write = s.bh() * s.nq * q_row;
  out.push_back(cv);
  if (s.g < s.h) {  // GQA / MQA: mha_bwd sums the per-query-head dK, then dV, over each group
    for (Tensor t : {Tensor::kDK, Tensor::kDV}) {
      LaunchTraffic sum = launch(t == Tensor::kDK ? "flash2_bwd_sum_dk" : "flash2_bwd_sum_dv");
      sum.traffic[t].read = s.bh() * s.nkv * q_row;
      sum.traffic[t].write = s.bg() * s.nkv * q_row;
      out.push_back(sum);
    }
  }
  return out;
}

std::vector<LaunchTraffic> flash_decode(const Workload& w, bool c) {
  // One CTA per (batch, head, split), on FA-2's packed view when a GQA group's query heads are
  // swapped into query rows: then K/V are read once per (batch, KV head, split), Q once per split.
  // Per sequence b of len_b cached tokens (kv_lengths; seq_kv each by default): the CTAs of its
  // non-empty splits read Q; K/V are read token by token whatever the page size, the tail of the
  // last page predicated off (docs/kernels.md), so Σ_b len_b rows per (b, head) CTA row.
  const Shape s = shape_of(packed_query_groups(w, true));
  const std::uint64_t q_row = s.d * s.v, splits = w.num_splits;
  const std::uint64_t bps = ceil_div(ceil_div(w.seq_kv, w.block_n), splits);
  std::uint64_t tokens = 0, live_splits = 0;  // Σ_b len_b, Σ_b (splits holding a block)
  for (std::uint64_t len : sequence_kv_lengths(w)) {
    tokens += len;
    live_splits += std::min(splits, ceil_div(ceil_div(len, w.block_n), bps));
  }
  std::vector<LaunchTraffic> out;
  LaunchTraffic sp = launch("flash_decode_split");
  sp.traffic[Tensor::kQ].read = s.h * (c ? s.b : live_splits) * s.nq * q_row;
  sp.traffic[Tensor::kK].read = (c ? s.g : s.h) * tokens * q_row;
  sp.traffic[Tensor::kV].read = sp.traffic[Tensor::kK].read;
  if (splits == 1) {  // FA-2: no combine launch; the split kernel writes O and the fp32 LSE
    sp.traffic[Tensor::kO].write = s.bh() * s.nq * q_row;
    sp.traffic[Tensor::kLse].write = s.bh() * s.nq * kStatBytes;
    out.push_back(sp);
    return out;
  }
  sp.traffic[Tensor::kOPartial].write = s.bh() * splits * s.nq * s.d * kAccBytes;
  sp.traffic[Tensor::kLsePartial].write = s.bh() * splits * s.nq * kStatBytes;
  out.push_back(sp);
  LaunchTraffic cb = launch("flash_decode_combine");
  cb.traffic[Tensor::kOPartial].read = sp.traffic[Tensor::kOPartial].write;
  cb.traffic[Tensor::kLsePartial].read = sp.traffic[Tensor::kLsePartial].write;
  cb.traffic[Tensor::kO].write = s.bh() * s.nq * q_row;
  cb.traffic[Tensor::kLse].write = s.bh() * s.nq * kStatBytes;
  out.push_back(cb);
  return out;
}

std::vector<LaunchTraffic> flash3(const Workload& w, bool c) {
  const Shape s = shape_of(w);
  const std::uint64_t q_row = s.d * s.v, o_row = s.d * (w.dtype == DType::kFp8 ? 2 : s.v);
  const PrefixSums p = prefix_sums(s.nq, w.block_m, s.nkv, w.block_n, w.causal);
  LaunchTraffic f = launch("flash3_fwd");
  f.traffic[Tensor::kQ].read = s.bh() * s.nq * q_row;
  f.traffic[Tensor::kK].read = c ? s.bg() * s.nkv * q_row : s.bh() * p.sum_x * q_row;
  f.traffic[Tensor::kV].read = f.traffic[Tensor::kK].read;
  f.traffic[Tensor::kO].write = s.bh() * s.nq * o_row;
  f.traffic[Tensor::kLse].write = s.bh() * s.nq * kStatBytes;
  return {f};
}

}  // namespace

std::vector<LaunchTraffic> flash3_traffic(const Workload& w, bool compulsory) { return flash3(w, compulsory); }
std::vector<LaunchTraffic> standard_traffic(const Workload& w, bool compulsory) { return standard(w, compulsory); }
std::vector<LaunchTraffic> flash1_traffic(const Workload& w, bool compulsory) { return flash1(w, compulsory); }
std::vector<LaunchTraffic> flash2_traffic(const Workload& w, bool compulsory) {
  // One query token split over the keys (the kernel resolved num_splits > 1): FA-2's split-KV pair.
  if (w.pass == Pass::kFwd && w.num_splits > 1) return flash_decode(w, compulsory);
  return flash2(w, compulsory);
}
std::vector<LaunchTraffic> flash_decode_traffic(const Workload& w, bool compulsory) {
  return flash_decode(w, compulsory);
}

}  // namespace attnsim::core
