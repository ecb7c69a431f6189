// Closed forms against hand derivations: FlashAttention's Theorem 2 accounting, the published
// GPT-2 medium figures (docs/references.md), and brute-force block enumerations.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/registry.h"
#include "sim/core/io_counts.h"

namespace attnsim::core {
namespace {

using kernels::closed_form_traffic;  // the workload's kernel picks its closed form
using kernels::compulsory_traffic;

Bytes total(const std::vector<LaunchTraffic>& v) {
  Bytes s = 0;
  for (const auto& l : v) s += l.traffic.total_read() + l.traffic.total_write();
  return s;
}

const TensorBytes& of(const std::vector<LaunchTraffic>& v, const std::string& launch, Tensor t) {
  for (const auto& l : v)
    if (l.kernel_name == launch) return l.traffic[t];
  static TensorBytes none;
  ADD_FAILURE() << "no launch " << launch;
  return none;
}

Workload gpt2_medium(const std::string& kernel) {
  Workload w;
  w.kernel = kernel;
  w.batch = 64;
  w.heads = 16;
  w.kv_heads = 16;
  w.seq_q = w.seq_kv = 1024;
  w.head_dim = 64;
  w.dtype = DType::kFp16;
  return w;
}

// published.md: Algorithms 0 + 3 (standard forward + backward) move about 25.2 GB for GPT-2
// medium: 11 N² + 12 N d values per head (forward 4N² + 4Nd, backward 7N² + 8Nd). With tiles
// covering whole matrices there is no re-reading. Eager PyTorch adds two launches the algorithms
// do not count: the product dP∘P of softmax_backward_cuda_out (read dP, P, write: 3 N²) and
// AccumulateGrad's layout copy of dK (read, write: 2 N d).
TEST(IoCounts, StandardFwdBwdIsAlgorithms0And3PlusEagerProductAndDkCopy) {
  Workload w = gpt2_medium("standard");
  w.pass = Pass::kFwdBwd;
  w.block_m = w.block_n = w.block_k = 1024;
  const auto t = closed_form_traffic(w);
  const Bytes n2 = 1024ull * 1024 * 2 * 64 * 16, nd = 1024ull * 64 * 2 * 64 * 16;
  EXPECT_EQ(total(t), 14 * n2 + 14 * nd);
  Bytes eager_only = 0;
  for (const auto& l : t)
    if (l.kernel_name == "standard_bwd_softmax_mul" || l.kernel_name == "standard_bwd_dk_copy")
      eager_only += l.traffic.total_read() + l.traffic.total_write();
  EXPECT_EQ(eager_only, 3 * n2 + 2 * nd);
  EXPECT_EQ(total(t) - eager_only, 11 * n2 + 12 * nd);
  EXPECT_NEAR((total(t) - eager_only) / 1e9, 25.2, 0.05);
}

// Theorem 2 / Appendix C: K, V read once; Q, O, m, ℓ read (and O, m, ℓ written) once per outer
// step, T_c = ceil(N / B_c) = 3 for B_c = 384. Plus the initialisation of O, ℓ, m.
TEST(IoCounts, Flash1ReadsQAndOncePerOuterStep) {
  Workload w = gpt2_medium("flash1");
  w.block_m = 64;
  w.block_n = 384;
  const auto t = closed_form_traffic(w);
  const Bytes nd = 64ull * 16 * 1024 * 64 * 2, n4 = 64ull * 16 * 1024 * 4;
  EXPECT_EQ(of(t, "flash1_fwd", Tensor::kQ).read, 3 * nd);
  EXPECT_EQ(of(t, "flash1_fwd", Tensor::kO), (TensorBytes{3 * nd, 3 * nd}));
  EXPECT_EQ(of(t, "flash1_fwd", Tensor::kM), (TensorBytes{3 * n4, 3 * n4}));
  EXPECT_EQ(of(t, "flash1_fwd", Tensor::kK).read, nd);
  EXPECT_EQ(of(t, "flash1_init", Tensor::kO).write, nd);
}

// Theorem 5 / Algorithm 4: K, V read once, dK, dV written once; Q, O, dO, ℓ, m read and dQ read
// and written once per outer step (T_c = 3 for B_c = 384); line 5 zeroes dQ, dK, dV. The forward
// launches are Algorithm 1's, unchanged by the pass.
TEST(IoCounts, Flash1BackwardReadsQODoAndDqOncePerOuterStep) {
  Workload w = gpt2_medium("flash1");
  w.block_m = 64;
  w.block_n = 384;
  w.pass = Pass::kFwdBwd;
  const auto t = closed_form_traffic(w);
  const Bytes nd = 64ull * 16 * 1024 * 64 * 2, n4 = 64ull * 16 * 1024 * 4;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[2].kernel_name, "flash1_bwd_init");
  EXPECT_EQ(t[3].kernel_name, "flash1_bwd");
  for (Tensor x : {Tensor::kQ, Tensor::kO, Tensor::kDO}) EXPECT_EQ(of(t, "flash1_bwd", x), (TensorBytes{3 * nd, 0}));
  EXPECT_EQ(of(t, "flash1_bwd", Tensor::kDQ), (TensorBytes{3 * nd, 3 * nd}));
  EXPECT_EQ(of(t, "flash1_bwd", Tensor::kL), (TensorBytes{3 * n4, 0}));
  EXPECT_EQ(of(t, "flash1_bwd", Tensor::kM), (TensorBytes{3 * n4, 0}));
  EXPECT_EQ(of(t, "flash1_bwd", Tensor::kK), (TensorBytes{nd, 0}));
  EXPECT_EQ(of(t, "flash1_bwd", Tensor::kDK), (TensorBytes{0, nd}));
  EXPECT_EQ(of(t, "flash1_bwd", Tensor::kDV), (TensorBytes{0, nd}));
  for (Tensor x : {Tensor::kDQ, Tensor::kDK, Tensor::kDV}) EXPECT_EQ(of(t, "flash1_bwd_init", x), (TensorBytes{0, nd}));
  Workload fwd = w;
  fwd.pass = Pass::kFwd;
  EXPECT_EQ(closed_form_traffic(fwd)[1].traffic, t[1].traffic);
  // Forward 1 + 2 + 3·3 values of N·d per head (init O; K, V; Q, O read, O write per outer
  // step), backward 3 + 2 + 3·3 + 2·3 + 2 (init dQ, dK, dV; K, V; Q, O, dO; dQ read and write;
  // dK, dV); statistics 2 + 4·3 (forward) + 2·3 (backward) fp32 values per row.
  EXPECT_EQ(total(t), 34 * nd + 20 * n4);
}

// Causal, ragged: Algorithm 4's (i, j) pairs enumerated by hand (query block i is visited for
// key block j when it holds a row that sees a key of block j) against the closed form.
TEST(IoCounts, Flash1CausalBackwardRowsEqualBlockEnumeration) {
  for (std::uint64_t nq : {37, 100, 128})
    for (std::uint64_t extra : {0, 13, 64})
      for (std::uint64_t br : {16, 48})
        for (std::uint64_t bc : {16, 40, 128}) {
          Workload w;
          w.kernel = "flash1";
          w.heads = w.kv_heads = 1;
          w.seq_q = nq;
          w.seq_kv = nq + extra;
          w.head_dim = 8;
          w.dtype = DType::kFp32;
          w.causal = true;
          w.pass = Pass::kFwdBwd;
          w.block_m = br;
          w.block_n = bc;
          Bytes rows = 0;
          for (std::uint64_t c0 = 0; c0 < w.seq_kv; c0 += bc)
            for (std::uint64_t r0 = 0; r0 < nq; r0 += br)
              if (std::min(nq, r0 + br) - 1 + extra >= c0) rows += std::min(br, nq - r0);
          const auto t = closed_form_traffic(w);
          EXPECT_EQ(of(t, "flash1_bwd", Tensor::kDO).read, rows * 8 * 4)
              << "nq " << nq << " extra " << extra << " br " << br << " bc " << bc;
          EXPECT_EQ(of(t, "flash1_bwd", Tensor::kDQ).write, rows * 8 * 4);
          EXPECT_EQ(of(t, "flash1_bwd", Tensor::kL).read, rows * 4);
        }
}

// FA-2 forward reads Q once, K and V once per query block, writes O once.
TEST(IoCounts, Flash2ReadsKAndVOncePerQueryBlock) {
  Workload w = gpt2_medium("flash2");
  w.block_m = 128;
  w.block_n = 128;
  const auto t = closed_form_traffic(w);
  const Bytes nd = 64ull * 16 * 1024 * 64 * 2;
  EXPECT_EQ(of(t, "flash2_fwd", Tensor::kQ).read, nd);
  EXPECT_EQ(of(t, "flash2_fwd", Tensor::kK).read, 8 * nd);
  EXPECT_EQ(of(t, "flash2_fwd", Tensor::kO).write, nd);
  // The fp32 LSE of every query row, in a forward-only run too (FA-2's forward writes gLSE
  // unconditionally; mha_fwd returns it).
  EXPECT_EQ(of(t, "flash2_fwd", Tensor::kLse).write, 64ull * 16 * 1024 * 4);
}

// Causal, ragged: enumerate blocks by hand (keys j·B_n < row_end + offset) and compare.
TEST(IoCounts, Flash2CausalKeyReadsEqualBlockEnumeration) {
  for (std::uint64_t nq : {37, 100, 128, 1000})
    for (std::uint64_t extra : {0, 13, 64})
      for (std::uint64_t bm : {16, 48, 64})
        for (std::uint64_t bn : {16, 40, 128}) {
          Workload w;
          w.kernel = "flash2";
          w.heads = w.kv_heads = 1;
          w.seq_q = nq;
          w.seq_kv = nq + extra;
          w.head_dim = 8;
          w.dtype = DType::kFp32;
          w.causal = true;
          w.block_m = bm;
          w.block_n = bn;
          Bytes keys = 0;
          for (std::uint64_t row0 = 0; row0 < nq; row0 += bm) {
            const std::uint64_t end = std::min(nq, row0 + bm) + extra;  // last key seen + 1
            for (std::uint64_t k0 = 0; k0 < end; k0 += bn) keys += std::min(bn, w.seq_kv - k0);
          }
          EXPECT_EQ(of(closed_form_traffic(w), "flash2_fwd", Tensor::kK).read, keys * 8 * 4)
              << "nq " << nq << " extra " << extra << " bm " << bm << " bn " << bn;
        }
}

// Causal eager standard fwd+bwd over 1000 x 1000 scores per head, d 64.
Workload standard_causal_fwdbwd(std::uint64_t heads) {
  Workload w;
  w.kernel = "standard";
  w.heads = w.kv_heads = heads;
  w.seq_q = w.seq_kv = 1000;
  w.head_dim = 64;
  w.causal = true;
  w.pass = Pass::kFwdBwd;
  w.block_m = 128;
  w.block_n = 96;
  w.block_k = 64;
  return w;
}

// Causal standard as eager PyTorch runs it: the full QKᵀ (no tile skipped), then the mask as an
// elementwise kernel over the whole score matrix; the backward masks dS the same way. Launch
// order follows autograd (bmm's `self` gradient before `mat2`'s: dP before dV, dQ before dK).
TEST(IoCounts, StandardCausalIsFullScoresPlusMaskKernels) {
  Workload w = standard_causal_fwdbwd(1);
  const Bytes s = 1000ull * 1000 * 2;
  const auto t = closed_form_traffic(w);
  EXPECT_EQ(of(t, "standard_qk", Tensor::kS).write, s);
  EXPECT_EQ(of(t, "standard_mask", Tensor::kS), (TensorBytes{s, s}));
  EXPECT_EQ(of(t, "standard_softmax", Tensor::kP).write, s);
  EXPECT_EQ(of(t, "standard_bwd_mask", Tensor::kDS), (TensorBytes{s, s}));
  // Each mask kernel reads the bool mask (1 B per value) once per query head: one head here.
  const Bytes mask = 1000ull * 1000;
  EXPECT_EQ(of(t, "standard_mask", Tensor::kMask), (TensorBytes{mask, 0}));
  EXPECT_EQ(of(t, "standard_bwd_mask", Tensor::kMask), (TensorBytes{mask, 0}));
  std::vector<std::string> names;
  for (const auto& l : t) names.push_back(l.kernel_name);
  EXPECT_EQ(names, (std::vector<std::string>{"standard_qk", "standard_mask", "standard_softmax", "standard_pv",
                                             "standard_bwd_dp", "standard_bwd_dv", "standard_bwd_softmax_mul",
                                             "standard_bwd_softmax", "standard_bwd_mask", "standard_bwd_dq",
                                             "standard_bwd_dk", "standard_bwd_dk_copy"}));
  w.causal = false;  // no mask kernels; every other launch's bytes unchanged
  const auto n = closed_form_traffic(w);
  EXPECT_EQ(n.size(), t.size() - 2);
  EXPECT_EQ(total(n) + 4 * s + 2 * mask, total(t));
  // Four heads read the mask four times; unbounded L2 (compulsory), once per launch.
  w.causal = true;
  w.heads = w.kv_heads = 4;
  EXPECT_EQ(of(closed_form_traffic(w), "standard_mask", Tensor::kMask).read, 4 * mask);
  EXPECT_EQ(of(compulsory_traffic(w), "standard_mask", Tensor::kMask).read, mask);
}

// scale_kernel (eager code that scales the scores, `(q @ kᵀ) * scale`): a multiply over S after QKᵀ
// and before the mask, and in the backward its MulBackward over dS after the mask's backward,
// before the dQ and dK GEMMs; each reads and writes the whole score matrix.
TEST(IoCounts, StandardScaleKernelScalesScoresAndTheirGradient) {
  Workload w = standard_causal_fwdbwd(2);
  w.scale_kernel = true;
  const Bytes s = 2ull * 1000 * 1000 * 2;
  const auto t = closed_form_traffic(w);
  EXPECT_EQ(of(t, "standard_scale", Tensor::kS), (TensorBytes{s, s}));
  EXPECT_EQ(of(t, "standard_bwd_scale", Tensor::kDS), (TensorBytes{s, s}));
  std::vector<std::string> names;
  for (const auto& l : t) names.push_back(l.kernel_name);
  EXPECT_EQ(names, (std::vector<std::string>{"standard_qk", "standard_scale", "standard_mask", "standard_softmax",
                                             "standard_pv", "standard_bwd_dp", "standard_bwd_dv",
                                             "standard_bwd_softmax_mul", "standard_bwd_softmax", "standard_bwd_mask",
                                             "standard_bwd_scale", "standard_bwd_dq", "standard_bwd_dk",
                                             "standard_bwd_dk_copy"}));
  w.scale_kernel = false;  // folded into q: two launches and 4 S of bytes fewer, the rest unchanged
  const auto folded = closed_form_traffic(w);
  EXPECT_EQ(folded.size(), t.size() - 2);
  EXPECT_EQ(total(folded) + 4 * s, total(t));
}

// GQA: compulsory K/V bytes are those of the KV heads; all-access bytes those of the query heads.
TEST(IoCounts, GqaCompulsoryKvBytesCountKvHeadsOnly) {
  Workload w = gpt2_medium("flash2");
  w.kv_heads = 2;
  w.block_m = 128;
  w.block_n = 128;
  const Bytes kv_nd = 64ull * 2 * 1024 * 64 * 2;
  EXPECT_EQ(of(compulsory_traffic(w), "flash2_fwd", Tensor::kK).read, kv_nd);
  EXPECT_EQ(of(closed_form_traffic(w), "flash2_fwd", Tensor::kK).read, kv_nd * 8 * 8);
}

// GQA in Algorithm 4: compulsory K/V bytes per KV head; dK, dV written per query head.
TEST(IoCounts, Flash1BackwardGqaCompulsoryKvBytesCountKvHeadsOnly) {
  Workload w = gpt2_medium("flash1");
  w.kv_heads = 2;
  w.block_m = 64;
  w.block_n = 384;
  w.pass = Pass::kFwdBwd;
  const Bytes kv_nd = 64ull * 2 * 1024 * 64 * 2, nd = 64ull * 16 * 1024 * 64 * 2;
  EXPECT_EQ(of(compulsory_traffic(w), "flash1_bwd", Tensor::kK).read, kv_nd);
  EXPECT_EQ(of(compulsory_traffic(w), "flash1_bwd", Tensor::kDQ), (TensorBytes{nd, nd}));
  EXPECT_EQ(of(compulsory_traffic(w), "flash1_bwd", Tensor::kDK).write, nd);
  EXPECT_EQ(of(closed_form_traffic(w), "flash1_bwd", Tensor::kK).read, nd);
}

// Split-KV: Q read once per split; partials are fp32.
TEST(IoCounts, FlashDecodePartialsScaleWithSplits) {
  Workload w;
  w.kernel = "flash_decode";
  w.batch = 8;
  w.heads = 32;
  w.kv_heads = 32;
  w.seq_q = 1;
  w.seq_kv = 4096;
  w.head_dim = 128;
  w.block_n = 128;
  w.num_splits = 4;
  const auto t = closed_form_traffic(w);
  EXPECT_EQ(of(t, "flash_decode_split", Tensor::kQ).read, 8ull * 32 * 4 * 128 * 2);
  EXPECT_EQ(of(t, "flash_decode_split", Tensor::kOPartial).write, 8ull * 32 * 4 * 128 * 4);
  EXPECT_EQ(of(t, "flash_decode_combine", Tensor::kO).write, 8ull * 32 * 128 * 2);
  EXPECT_EQ(of(t, "flash_decode_combine", Tensor::kLse).write, 8ull * 32 * 4);  // combine_attn_seqk_parallel's gLSE
  EXPECT_EQ(of(t, "flash_decode_split", Tensor::kK).read, 8ull * 32 * 4096 * 128 * 2);
}

}  // namespace
}  // namespace attnsim::core
