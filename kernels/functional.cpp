#include "kernels/functional.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "kernels/attention_numerics.h"
#include "kernels/kernel_defaults.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kWorkBudget = 5e7;

struct Problem {
  const core::Workload& w;
  Precision storage;
  std::uint64_t nq, nkv, d, off;
  bool allowed(std::uint64_t q, std::uint64_t k) const { return !w.causal || k <= q + off; }
  double st(double x) const { return storage == Precision::kFp64 ? x : round_to(x, storage); }
  const std::function<void()>* poll = nullptr;  // called once per query row (or row block) and step
  void tick() const {
    if (poll && *poll) (*poll)();
  }
};

struct Grads {
  Matrix o, dq, dk, dv;
};

double dot(const Matrix& a, std::size_t i, const Matrix& b, std::size_t j) {
  double s = 0;
  for (std::size_t c = 0; c < a.cols; ++c) s += a(i, c) * b(j, c);
  return s;
}

// Plain attention and its gradients: P = softmax(mask(Q Kᵀ)), O = P V, dV = Pᵀ dO,
// dP = dO Vᵀ, dS = P ∘ (dP - rowsum(dP ∘ P)), dQ = dS K, dK = dSᵀ Q.
Grads reference(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& d_o, bool bwd) {
  Grads g{Matrix(p.nq, p.d), Matrix(p.nq, p.d), Matrix(p.nkv, p.d), Matrix(p.nkv, p.d)};
  Matrix prob(p.nq, p.nkv);
  for (std::size_t i = 0; i < p.nq; ++i) {
    p.tick();
    double m = kNegInf;
    for (std::size_t j = 0; j < p.nkv; ++j)
      if (p.allowed(i, j)) m = std::max(m, dot(q, i, k, j));
    double l = 0;
    for (std::size_t j = 0; j < p.nkv; ++j)
      if (p.allowed(i, j)) l += (prob(i, j) = std::exp(dot(q, i, k, j) - m));
    for (std::size_t j = 0; j < p.nkv; ++j) {
      prob(i, j) /= l;
      for (std::size_t c = 0; c < p.d; ++c) g.o(i, c) += prob(i, j) * v(j, c);
    }
  }
  if (!bwd) return g;
  for (std::size_t i = 0; i < p.nq; ++i) {
    p.tick();
    Vector dp(p.nkv);
    double rowsum = 0;
    for (std::size_t j = 0; j < p.nkv; ++j) rowsum += prob(i, j) * (dp[j] = dot(d_o, i, v, j));
    for (std::size_t j = 0; j < p.nkv; ++j) {
      const double ds = prob(i, j) * (dp[j] - rowsum);
      for (std::size_t c = 0; c < p.d; ++c) {
        g.dv(j, c) += prob(i, j) * d_o(i, c);
        g.dq(i, c) += ds * k(j, c);
        g.dk(j, c) += ds * q(i, c);
      }
    }
  }
  return g;
}

// Online softmax state of one query row over the key range [k0, k1).
struct RowState {
  double m = kNegInf, l = 0;
  Vector acc;
};

void online_block(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, std::size_t i, std::size_t k0,
                  std::size_t k1, RowState& s) {
  double m_blk = kNegInf;
  Vector sc(k1 - k0, kNegInf);
  for (std::size_t j = k0; j < k1; ++j)
    if (p.allowed(i, j)) m_blk = std::max(m_blk, sc[j - k0] = dot(q, i, k, j));
  if (m_blk == kNegInf) return;  // the whole block is masked for this row
  const double m_new = std::max(s.m, m_blk), scale = std::exp(s.m - m_new);
  s.l *= scale;
  for (double& a : s.acc) a *= scale;
  for (std::size_t j = k0; j < k1; ++j) {
    if (sc[j - k0] == kNegInf) continue;
    const double e = std::exp(sc[j - k0] - m_new);
    s.l += e;
    const double e_st = p.st(e);  // P cast to the storage type before P·V
    for (std::size_t c = 0; c < p.d; ++c) s.acc[c] += e_st * v(j, c);
  }
  s.m = m_new;
}

Matrix flash2_forward(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, Vector& lse) {
  Matrix o(p.nq, p.d);
  lse.assign(p.nq, 0);
  const std::uint64_t bm = p.w.block_m, bn = p.w.block_n;
  for (std::uint64_t row0 = 0; row0 < p.nq; row0 += bm) {
    const std::uint64_t r = std::min(bm, p.nq - row0);
    const std::uint64_t blocks = p.w.causal ? KernelDefaults::causal_col_blocks(row0, r, p.off, p.nkv, bn)
                                            : core::ceil_div(p.nkv, bn);
    std::vector<RowState> rows(r, RowState{kNegInf, 0, Vector(p.d, 0)});
    for (std::uint64_t j = 0; j < blocks; ++j) {
      p.tick();
      for (std::uint64_t i = 0; i < r; ++i)
        online_block(p, q, k, v, row0 + i, j * bn, std::min(p.nkv, (j + 1) * bn), rows[i]);
    }
    for (std::uint64_t i = 0; i < r; ++i) {
      for (std::size_t c = 0; c < p.d; ++c) o(row0 + i, c) = p.st(rows[i].acc[c] / rows[i].l);
      lse[row0 + i] = rows[i].m + std::log(rows[i].l);
    }
  }
  return o;
}

// FA-3 forward: per query block of block_m rows, each consumer warp group owns 64 rows; the
// K/V blocks run from the last one the tile needs down to the first (n_block_max - 1 .. 0), the
// warp groups interleaved block by block in ping-pong order. With intra-warp-group overlap the
// P V product of block j is added after the softmax of block j + 1 (O rescaled afterwards), as
// FA-3's pipelined mainloop does. P is rounded to the storage type before P V; FP8 writes O in
// bf16.
Matrix flash3_forward(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, Vector& lse) {
  Matrix o(p.nq, p.d);
  lse.assign(p.nq, 0);
  const std::uint64_t bm = p.w.block_m, bn = p.w.block_n, wg_rows = 64;
  const bool overlap = p.w.intrawg_overlap != 0;
  for (std::uint64_t row0 = 0; row0 < p.nq; row0 += bm) {
    const std::uint64_t r = std::min(bm, p.nq - row0);
    const std::uint64_t blocks = p.w.causal ? KernelDefaults::causal_col_blocks(row0, r, p.off, p.nkv, bn)
                                            : core::ceil_div(p.nkv, bn);
    std::vector<RowState> rows(r, RowState{kNegInf, 0, Vector(p.d, 0)});
    // Pending P V of the previous block, per row: its P (in storage precision) and key range.
    std::vector<Vector> pending(r);
    std::vector<std::uint64_t> pending_k0(r, 0);
    auto flush = [&](std::uint64_t i) {
      for (std::size_t j = 0; j < pending[i].size(); ++j)
        for (std::size_t c = 0; c < p.d; ++c) rows[i].acc[c] += pending[i][j] * v(pending_k0[i] + j, c);
      pending[i].clear();
    };
    const std::uint64_t groups = core::ceil_div(r, wg_rows);
    for (std::uint64_t jj = 0; jj < blocks; ++jj) {
      const std::uint64_t nb = blocks - 1 - jj, k0 = nb * bn, k1 = std::min(p.nkv, k0 + bn);
      for (std::uint64_t g = 0; g < groups; ++g) {  // ping-pong: warp group 0, 1, ... per block
        p.tick();
        for (std::uint64_t i = g * wg_rows; i < std::min(r, (g + 1) * wg_rows); ++i) {
          RowState& s = rows[i];
          Vector sc(k1 - k0, kNegInf);
          double m_blk = kNegInf;
          for (std::uint64_t j = k0; j < k1; ++j)
            if (p.allowed(row0 + i, j)) m_blk = std::max(m_blk, sc[j - k0] = dot(q, row0 + i, k, j));
          const double m_new = std::max(s.m, m_blk);
          if (m_new == kNegInf) continue;  // nothing unmasked yet
          const double scale = s.m == kNegInf ? 0.0 : std::exp(s.m - m_new);
          if (!overlap) {
            for (double& a : s.acc) a *= scale;
          }
          Vector pr(k1 - k0, 0.0);
          double l_blk = 0;
          for (std::uint64_t j = k0; j < k1; ++j) {
            if (sc[j - k0] == kNegInf) continue;
            const double e = std::exp(sc[j - k0] - m_new);
            l_blk += e;
            pr[j - k0] = p.st(e);
          }
          if (overlap) {  // O += P_{j-1} V_{j-1} (issued with S_j), then O rescaled
            flush(i);
            for (double& a : s.acc) a *= scale;
            pending[i] = pr;
            pending_k0[i] = k0;
          } else {
            for (std::uint64_t j = k0; j < k1; ++j)
              for (std::size_t c = 0; c < p.d; ++c) s.acc[c] += pr[j - k0] * v(j, c);
          }
          s.l = s.l * scale + l_blk;
          s.m = m_new;
        }
      }
    }
    const Precision out = p.storage == Precision::kFp8E4M3 ? Precision::kBf16 : p.storage;
    for (std::uint64_t i = 0; i < r; ++i) {
      flush(i);
      for (std::size_t c = 0; c < p.d; ++c) {
        const double x = rows[i].acc[c] / rows[i].l;
        o(row0 + i, c) = out == Precision::kFp64 ? x : round_to(x, out);
      }
      lse[row0 + i] = rows[i].m + std::log(rows[i].l);
    }
  }
  return o;
}

// FA-2 backward: Delta = rowsum(dO ∘ O); per key block j, per query block i that sees it,
// P = exp(Q K_jᵀ - LSE), dV_j += Pᵀ dO, dS = P ∘ (dO V_jᵀ - Delta), dK_j += dSᵀ Q, dQ_i += dS K_j.
void flash2_backward(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& o,
                     const Vector& lse, const Matrix& d_o, Grads& g) {
  const std::uint64_t bm = p.w.bwd_block_m ? p.w.bwd_block_m : p.w.block_m;
  const std::uint64_t bn = p.w.bwd_block_n ? p.w.bwd_block_n : p.w.block_n;
  Vector delta(p.nq, 0);
  for (std::size_t i = 0; i < p.nq; ++i)
    for (std::size_t c = 0; c < p.d; ++c) delta[i] += d_o(i, c) * o(i, c);
  for (std::uint64_t col0 = 0; col0 < p.nkv; col0 += bn) {
    const std::uint64_t c_end = std::min(p.nkv, col0 + bn);
    const std::uint64_t first = p.w.causal ? KernelDefaults::causal_first_row(col0, p.off, bm) : 0;
    for (std::uint64_t row0 = first; row0 < p.nq; row0 += bm) {
      p.tick();
      for (std::uint64_t i = row0; i < std::min(p.nq, row0 + bm); ++i)
        for (std::uint64_t j = col0; j < c_end; ++j) {
          if (!p.allowed(i, j)) continue;
          const double pr = std::exp(dot(q, i, k, j) - lse[i]);
          const double ds = pr * (dot(d_o, i, v, j) - delta[i]);
          for (std::size_t c = 0; c < p.d; ++c) {
            g.dv(j, c) += pr * d_o(i, c);
            g.dk(j, c) += ds * q(i, c);
            g.dq(i, c) += ds * k(j, c);
          }
        }
    }
  }
}

// FA-3 backward (hopper/mainloop_bwd_sm90_tma_gmma_ws.hpp): dPsum = rowsum(dO ∘ O) from the
// stored O; per key block of bwd_block_n keys, per query block from the causal diagonal on,
// P = exp(Q Kᵀ - LSE), dS = P ∘ (dO Vᵀ - dPsum), both rounded to the storage type as the wgmma
// operands of dV += Pᵀ dO, dK += dSᵀ Q and dQ = dS K; dQ is reduce-added in fp32 into dQ_accum
// and converted at the end. dK, dV stay in fp32 accumulators: rounded to the storage type (MHA),
// or to fp32 for the GQA group's reduce-add when `group_partial` (the caller sums and rounds).
void flash3_backward(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& o,
                     const Vector& lse, const Matrix& d_o, Grads& g, bool group_partial) {
  const std::uint64_t bm = p.w.bwd_block_m, bn = p.w.bwd_block_n;
  const Precision fp32 = p.storage == Precision::kFp64 ? Precision::kFp64 : Precision::kFp32;
  auto f32 = [&](double x) { return fp32 == Precision::kFp64 ? x : round_to(x, fp32); };
  Vector dpsum(p.nq, 0);
  for (std::size_t i = 0; i < p.nq; ++i)
    for (std::size_t c = 0; c < p.d; ++c) dpsum[i] += d_o(i, c) * o(i, c);
  Matrix dq_acc(p.nq, p.d);
  for (std::uint64_t col0 = 0; col0 < p.nkv; col0 += bn) {
    const std::uint64_t c_end = std::min(p.nkv, col0 + bn);
    const std::uint64_t first = p.w.causal ? KernelDefaults::causal_first_row(col0, p.off, bm) : 0;
    for (std::uint64_t row0 = first; row0 < p.nq; row0 += bm) {
      p.tick();
      const std::uint64_t r_end = std::min(p.nq, row0 + bm);
      Matrix dq_blk(r_end - row0, p.d);
      for (std::uint64_t i = row0; i < r_end; ++i)
        for (std::uint64_t j = col0; j < c_end; ++j) {
          if (!p.allowed(i, j)) continue;
          const double pr = std::exp(dot(q, i, k, j) - lse[i]);
          const double ds = p.st(pr * (dot(d_o, i, v, j) - dpsum[i]));
          const double pr_st = p.st(pr);
          for (std::size_t c = 0; c < p.d; ++c) {
            g.dv(j, c) += pr_st * d_o(i, c);
            g.dk(j, c) += ds * q(i, c);
            dq_blk(i - row0, c) += ds * k(j, c);
          }
        }
      for (std::uint64_t i = row0; i < r_end; ++i)  // SM90_BULK_REDUCE_ADD of the fp32 tile
        for (std::size_t c = 0; c < p.d; ++c) dq_acc(i, c) = f32(dq_acc(i, c) + f32(dq_blk(i - row0, c)));
    }
  }
  for (std::size_t x = 0; x < dq_acc.values.size(); ++x) g.dq.values[x] = p.st(dq_acc.values[x]);
  for (Matrix* m : {&g.dk, &g.dv})
    for (double& x : m->values) x = group_partial ? f32(x) : p.st(x);
}

// Algorithm 1: O, ℓ, m live in "HBM" arrays, initialised to 0, 0, -inf; outer loop over key
// blocks, inner over query blocks, each update read-modify-writes them.
// ℓ and m (the final statistics Algorithm 4 reads) are returned in `l`, `m`.
Matrix flash1_forward(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, Vector& l, Vector& m) {
  Matrix o(p.nq, p.d);
  l.assign(p.nq, 0);
  m.assign(p.nq, kNegInf);
  const std::uint64_t br = p.w.block_m, bc = p.w.block_n;
  for (std::uint64_t col0 = 0; col0 < p.nkv; col0 += bc) {
    const std::uint64_t first = p.w.causal ? KernelDefaults::causal_first_row(col0, p.off, br) : 0;
    for (std::uint64_t i = first; i < p.nq; ++i) {
      p.tick();
      RowState blk{kNegInf, 0, Vector(p.d, 0)};
      online_block(p, q, k, v, i, col0, std::min(p.nkv, col0 + bc), blk);
      if (blk.m == kNegInf) continue;
      const double m_new = std::max(m[i], blk.m);
      const double a = std::exp(m[i] - m_new), b = std::exp(blk.m - m_new);
      const double l_new = a * l[i] + b * blk.l;
      for (std::size_t c = 0; c < p.d; ++c) o(i, c) = (l[i] * a * o(i, c) + b * blk.acc[c]) / l_new;
      l[i] = l_new;
      m[i] = m_new;
    }
  }
  for (double& x : o.values) x = p.st(x);
  return o;
}

// Algorithm 4: dQ, dK, dV start at 0 "in HBM"; outer loop over key blocks j (B_c), inner over
// the query blocks i (B_r) that see block j; per (i, j) P_ij = exp(Q_i K_jᵀ - m_i)/ℓ_i from the
// forward's ℓ, m, D_i = rowsum(dO_i ∘ O_i) recomputed, dS_ij = P_ij ∘ (dO_i V_jᵀ - D_i);
// dQ_i += dS_ij K_j is written back (stored value) each time; dK_j, dV_j accumulate on chip and
// are written once per j.
void flash1_backward(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& o,
                     const Vector& l, const Vector& m, const Matrix& d_o, Grads& g) {
  const std::uint64_t br = p.w.block_m, bc = p.w.block_n;
  for (std::uint64_t col0 = 0; col0 < p.nkv; col0 += bc) {
    const std::uint64_t c_end = std::min(p.nkv, col0 + bc);
    Matrix dk_j(c_end - col0, p.d), dv_j(c_end - col0, p.d);
    const std::uint64_t first = p.w.causal ? KernelDefaults::causal_first_row(col0, p.off, br) : 0;
    for (std::uint64_t row0 = first; row0 < p.nq; row0 += br)
      for (std::uint64_t i = row0; i < std::min(p.nq, row0 + br); ++i) {
        p.tick();
        double d_i = 0;
        for (std::size_t c = 0; c < p.d; ++c) d_i += d_o(i, c) * o(i, c);
        Vector dq_i(p.d);
        for (std::size_t c = 0; c < p.d; ++c) dq_i[c] = g.dq(i, c);
        for (std::uint64_t j = col0; j < c_end; ++j) {
          if (!p.allowed(i, j)) continue;
          const double pr = std::exp(dot(q, i, k, j) - m[i]) / l[i];
          const double ds = pr * (dot(d_o, i, v, j) - d_i);
          for (std::size_t c = 0; c < p.d; ++c) {
            dv_j(j - col0, c) += pr * d_o(i, c);
            dk_j(j - col0, c) += ds * q(i, c);
            dq_i[c] += ds * k(j, c);
          }
        }
        for (std::size_t c = 0; c < p.d; ++c) g.dq(i, c) = p.st(dq_i[c]);
      }
    for (std::uint64_t j = col0; j < c_end; ++j)
      for (std::size_t c = 0; c < p.d; ++c) {
        g.dk(j, c) = p.st(dk_j(j - col0, c));
        g.dv(j, c) = p.st(dv_j(j - col0, c));
      }
  }
}

// Split-KV: each split runs the online softmax over its keys and stores (acc/ℓ, m + log ℓ) in
// fp32 (double when storage is kFp64); the combine rescales the partials by exp(lse_s - max lse) and normalises.
Matrix decode_forward(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v) {
  Matrix o(p.nq, p.d);
  // Blocks per split from the cache capacity (seq_kv), the last block from this sequence's
  // length p.nkv (kv_lengths), as FA-2's split kernel: later splits may be empty.
  const std::uint64_t bn = p.w.block_n, t_c = core::ceil_div(p.nkv, bn);
  const std::uint64_t bps = core::ceil_div(core::ceil_div(p.w.seq_kv, bn), p.w.num_splits);
  for (std::size_t i = 0; i < p.nq; ++i) {
    p.tick();
    std::vector<std::pair<double, Vector>> parts;
    for (std::uint64_t s = 0; s < p.w.num_splits; ++s) {
      RowState st{kNegInf, 0, Vector(p.d, 0)};
      for (std::uint64_t j = s * bps; j < std::min(t_c, (s + 1) * bps); ++j)
        online_block(p, q, k, v, i, j * bn, std::min(p.nkv, (j + 1) * bn), st);
      if (st.m == kNegInf) continue;
      const Precision fp32 = p.storage == Precision::kFp64 ? Precision::kFp64 : Precision::kFp32;
      Vector part(p.d);
      for (std::size_t c = 0; c < p.d; ++c) part[c] = round_to(st.acc[c] / st.l, fp32);
      parts.emplace_back(round_to(st.m + std::log(st.l), fp32), part);
    }
    double mx = kNegInf;
    for (const auto& pr : parts) mx = std::max(mx, pr.first);
    double den = 0;
    for (const auto& pr : parts) den += std::exp(pr.first - mx);
    for (const auto& pr : parts)
      for (std::size_t c = 0; c < p.d; ++c) o(i, c) += std::exp(pr.first - mx) / den * pr.second[c];
  }
  for (double& x : o.values) x = p.st(x);
  return o;
}

// Textbook: S stored, P stored (both rounded to storage), O = P V; the masked and skipped
// entries are zero in P. Backward follows the same autograd formulas on the stored P.
Grads standard_schedule(const Problem& p, const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& d_o,
                        bool bwd) {
  if (p.storage == Precision::kFp64) return reference(p, q, k, v, d_o, bwd);
  Grads g = reference(p, q, k, v, d_o, bwd);  // gradients: double on the rounded inputs
  Matrix o(p.nq, p.d);
  for (std::size_t i = 0; i < p.nq; ++i) {
    p.tick();
    Vector s(p.nkv, kNegInf);
    double m = kNegInf;
    for (std::size_t j = 0; j < p.nkv; ++j)
      if (p.allowed(i, j)) m = std::max(m, s[j] = p.st(dot(q, i, k, j)));
    double l = 0;
    for (std::size_t j = 0; j < p.nkv; ++j)
      if (s[j] != kNegInf) l += std::exp(s[j] - m);
    for (std::size_t j = 0; j < p.nkv; ++j) {
      if (s[j] == kNegInf) continue;
      const double pr = p.st(std::exp(s[j] - m) / l);
      for (std::size_t c = 0; c < p.d; ++c) o(i, c) += pr * v(j, c);
    }
  }
  for (double& x : o.values) x = p.st(x);
  g.o = o;
  return g;
}

double rel_error(const Matrix& got, const Matrix& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    diff = std::max(diff, std::abs(got.values[i] - want.values[i]));
    scale = std::max(scale, std::abs(want.values[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

// Raw inputs before they are stored: `rows` x `cols` draws of the workload's distribution, times
// `scale`. N(0,1), or with functional_inputs: outliers N(0,1) + N(0,100)·Bernoulli(0.001).
Matrix random_matrix(std::mt19937_64& rng, std::size_t rows, std::size_t cols, double scale, const Problem& p) {
  std::normal_distribution<double> n(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const bool outliers = p.w.functional_inputs == core::FunctionalInputs::kOutliers;
  Matrix m(rows, cols);
  for (double& x : m.values) {
    x = n(rng);
    if (outliers && u(rng) < 0.001) x += 10.0 * n(rng);
    x *= scale;
  }
  return m;
}

// The matrix as the kernel reads it: every value rounded to the storage precision. FP8 values
// are first divided by a scale, amax / 448 over the whole matrix (fp8_scales: head) or over each
// group of `block_rows` rows (block; 0 rows: the whole matrix), and multiplied by it again after the rounding (the
// kernel's descale); fp8_scales: none rounds them as they are.
Matrix stored(const Matrix& raw, const Problem& p, std::uint64_t block_rows) {
  Matrix m = raw;
  const bool scaled = p.storage == Precision::kFp8E4M3 && p.w.fp8_scales != core::Fp8Scales::kNone;
  if (!scaled) {
    for (double& x : m.values) x = p.st(x);
    return m;
  }
  const std::size_t per = p.w.fp8_scales == core::Fp8Scales::kBlock && block_rows > 0 ? block_rows : m.rows;
  for (std::size_t r0 = 0; r0 < m.rows; r0 += per) {
    const auto first = m.values.begin() + static_cast<std::ptrdiff_t>(r0 * m.cols);
    const auto last = m.values.begin() + static_cast<std::ptrdiff_t>(std::min(m.rows, r0 + per) * m.cols);
    double amax = 0;
    for (auto it = first; it != last; ++it) amax = std::max(amax, std::abs(*it));
    if (amax == 0) continue;
    const double scale = amax / max_finite(Precision::kFp8E4M3);
    for (auto it = first; it != last; ++it) *it = round_to(*it / scale, Precision::kFp8E4M3) * scale;
  }
  return m;
}

// Incoherent processing (the FlashAttention-3 paper's FP8 section): each row times M = D H / sqrt(d),
// D a diagonal of random signs, H the d x d Hadamard matrix (a fast Walsh-Hadamard transform).
// M is orthogonal, so (Q M)(K M)^T = Q K^T, while outliers are spread over the row.
void rotate_rows(Matrix& m, const std::vector<double>& signs) {
  const std::size_t d = m.cols;
  const double norm = 1.0 / std::sqrt(static_cast<double>(d));
  for (std::size_t i = 0; i < m.rows; ++i) {
    double* x = &m.values[i * d];
    for (std::size_t c = 0; c < d; ++c) x[c] *= signs[c];
    for (std::size_t h = 1; h < d; h *= 2)
      for (std::size_t j = 0; j < d; j += 2 * h)
        for (std::size_t c = j; c < j + h; ++c) {
          const double a = x[c], b = x[c + h];
          x[c] = a + b;
          x[c + h] = a - b;
        }
    for (std::size_t c = 0; c < d; ++c) x[c] *= norm;
  }
}

}  // namespace

Precision storage_precision(core::DType dtype) {
  switch (dtype) {
    case core::DType::kFp32: return Precision::kFp32;
    case core::DType::kFp16: return Precision::kFp16;
    case core::DType::kBf16: return Precision::kBf16;
    case core::DType::kFp8: return Precision::kFp8E4M3;
  }
  return Precision::kFp64;
}

double run_functional(const core::Workload& w, Precision storage) { return run_functional(w, storage, {}); }

double run_functional(const core::Workload& w, Precision storage, const std::function<void()>& poll) {
  return functional_errors(w, storage, poll).max_rel_error;
}

FunctionalErrors functional_errors(const core::Workload& w, Precision storage, const std::function<void()>& poll) {
  const std::string& kn = w.kernel;
  if (kn != "standard" && kn != "flash1" && kn != "flash2" && kn != "flash3" && kn != "flash_decode")
    throw core::ConfigError(core::ConfigProblem{"", 0, "functional", "kernel '" + kn + "' has no functional mode"});
  Problem p{w, storage, w.seq_q, w.seq_kv, w.head_dim, w.seq_kv >= w.seq_q ? w.seq_kv - w.seq_q : 0, &poll};
  const bool bwd = w.pass == core::Pass::kFwdBwd && kn != "flash_decode";
  const std::uint64_t kv_heads = w.kv_heads ? w.kv_heads : w.heads, group = w.heads / kv_heads;
  const double per_head = static_cast<double>(p.nq) * p.nkv * p.d * (bwd ? 6 : 3);
  std::mt19937_64 rng(w.seed);
  double err = 0, work = 0, sq_sum = 0, sq_count = 0;
  auto result = [&] { return FunctionalErrors{err, sq_count > 0 ? std::sqrt(sq_sum / sq_count) : 0.0}; };
  // The RMSE's reference needs its own run of plain attention where the stored inputs differ
  // from the raw ones.
  const bool exact_reference = storage != Precision::kFp64 || w.incoherent_processing;
  const std::uint64_t q_rows = w.block_m, kv_rows = w.block_n;  // FP8 block scales (0: the whole matrix)
  std::vector<Matrix> group_got, group_ref;  // flash3 GQA: the group's dK, dV (kernel, reference)
  auto f32_sum = [&](double a, double b) { return storage == Precision::kFp64 ? a + b : round_to(a + b, Precision::kFp32); };
  const std::vector<std::uint64_t> lengths = core::sequence_kv_lengths(w);  // seq_kv each unless kv_lengths
  for (std::uint64_t b = 0; b < w.batch; ++b)
    for (std::uint64_t kvh = 0; kvh < kv_heads; ++kvh) {
      p.nkv = lengths[b];
      p.off = p.nkv >= p.nq ? p.nkv - p.nq : 0;
      const Matrix k_raw = random_matrix(rng, p.nkv, p.d, 1.0, p), v_raw = random_matrix(rng, p.nkv, p.d, 1.0, p);
      std::vector<double> signs;  // incoherent processing: one rotation per (batch, KV head)
      if (w.incoherent_processing) {
        std::uint64_t state = w.seed ^ (0x9E3779B97F4A7C15ull * (b * kv_heads + kvh + 1));
        for (std::uint64_t c = 0; c < p.d; ++c) signs.push_back((core::splitmix64(state) & 1) ? -1.0 : 1.0);
      }
      auto prepare = [&](const Matrix& raw, bool rotated, std::uint64_t block_rows) {
        if (!rotated || signs.empty()) return stored(raw, p, block_rows);
        Matrix m = raw;
        rotate_rows(m, signs);
        return stored(m, p, block_rows);
      };
      const Matrix k = prepare(k_raw, true, kv_rows), v = prepare(v_raw, false, kv_rows);
      for (std::uint64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
        if (work > 0 && work + per_head > kWorkBudget) return result();
        work += per_head;
        const Matrix q_raw = random_matrix(rng, p.nq, p.d, 1.0 / std::sqrt(static_cast<double>(p.d)), p);
        const Matrix q = prepare(q_raw, true, q_rows);
        const Matrix d_o = bwd ? stored(random_matrix(rng, p.nq, p.d, 1.0, p), p, q_rows) : Matrix();
        const Grads ref = reference(p, q, k, v, d_o, bwd);
        Grads got;
        if (kn == "standard") {
          got = standard_schedule(p, q, k, v, d_o, bwd);
        } else if (kn == "flash1") {
          Vector l, m;
          got.o = flash1_forward(p, q, k, v, l, m);
          if (bwd) {
            got.dq = Matrix(p.nq, p.d), got.dk = Matrix(p.nkv, p.d), got.dv = Matrix(p.nkv, p.d);
            flash1_backward(p, q, k, v, got.o, l, m, d_o, got);
          }
        } else if (kn == "flash3") {
          Vector lse;
          got.o = flash3_forward(p, q, k, v, lse);
          if (bwd) {
            got.dq = Matrix(p.nq, p.d), got.dk = Matrix(p.nkv, p.d), got.dv = Matrix(p.nkv, p.d);
            flash3_backward(p, q, k, v, got.o, lse, d_o, got, group > 1);
          }
        } else if (kn == "flash_decode" || (kn == "flash2" && w.num_splits > 1)) {  // flash2: FA-2's split-KV pair
          got.o = decode_forward(p, q, k, v);
        } else {
          Vector lse;
          got.o = flash2_forward(p, q, k, v, lse);
          if (bwd) {
            got.dq = Matrix(p.nq, p.d), got.dk = Matrix(p.nkv, p.d), got.dv = Matrix(p.nkv, p.d);
            flash2_backward(p, q, k, v, got.o, lse, d_o, got);
          }
        }
        err = std::max(err, rel_error(got.o, ref.o));
        const Matrix exact = exact_reference ? reference(p, q_raw, k_raw, v_raw, Matrix(), false).o : Matrix();
        const Matrix& want = exact_reference ? exact : ref.o;
        for (std::size_t x = 0; x < want.values.size(); ++x) {
          const double e = got.o.values[x] - want.values[x];
          sq_sum += e * e;
        }
        sq_count += static_cast<double>(want.values.size());
        if (bwd && kn == "flash3" && group > 1) {  // FA-3 sums dK, dV over the GQA group
          err = std::max(err, rel_error(got.dq, ref.dq));
          if (h == kvh * group) group_got = {Matrix(p.nkv, p.d), Matrix(p.nkv, p.d)}, group_ref = group_got;
          for (std::size_t x = 0; x < ref.dk.values.size(); ++x) {
            group_got[0].values[x] = f32_sum(group_got[0].values[x], got.dk.values[x]);
            group_got[1].values[x] = f32_sum(group_got[1].values[x], got.dv.values[x]);
            group_ref[0].values[x] += ref.dk.values[x];
            group_ref[1].values[x] += ref.dv.values[x];
          }
          if (h + 1 == (kvh + 1) * group) {
            for (Matrix& m : group_got)
              for (double& x : m.values) x = p.st(x);
            err = std::max({err, rel_error(group_got[0], group_ref[0]), rel_error(group_got[1], group_ref[1])});
          }
        } else if (bwd) {
          err = std::max({err, rel_error(got.dq, ref.dq), rel_error(got.dk, ref.dk), rel_error(got.dv, ref.dv)});
        }
      }
    }
  return result();
}

}  // namespace attnsim::kernels
