// Functional mode: each kernel's tile schedule on random numbers equals plain attention
// (double: 1e-12 relative), forward and backward; storage rounding stays within u-based bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/attention_numerics.h"
#include "kernels/functional.h"
#include "kernels/registry.h"
#include "test_device.h"

namespace attnsim::kernels {
namespace {

core::Workload small(const std::string& kernel) {
  core::Workload w;
  w.kernel = kernel;
  w.batch = 1;
  w.heads = 4;
  w.kv_heads = 2;
  w.seq_q = w.seq_kv = 100;
  w.head_dim = 16;
  w.block_m = 32;
  w.block_n = 16;
  w.block_k = 16;
  w.seed = 7;
  return w;
}

double functional_error(core::Workload w, Precision storage = Precision::kFp64) {
  const core::TileProgram p = make_program(w, testing::small_gpu());
  return run_functional(p.workload, storage);
}

TEST(Functional, TiledKernelsMatchStandardAttentionInDouble) {
  for (const char* k : {"flash1", "flash2", "standard"})
    for (bool causal : {false, true})
      for (std::uint64_t nq : {64, 100}) {
        core::Workload w = small(k);
        w.causal = causal;
        w.seq_q = nq;
        w.seq_kv = 100;
        const double e = functional_error(w);
        EXPECT_LE(e, 1e-12) << k << " causal " << causal << " nq " << nq;
      }
}

TEST(Functional, Flash2BackwardGradientsMatchReferenceInDouble) {
  for (bool causal : {false, true})
    for (std::uint64_t kvh : {4, 1}) {
      core::Workload w = small("flash2");
      w.pass = core::Pass::kFwdBwd;
      w.causal = causal;
      w.kv_heads = kvh;
      EXPECT_LE(functional_error(w), 1e-12) << "causal " << causal << " kv_heads " << kvh;
    }
}

// Algorithm 4: ragged blocks (100 = 6·16 + 4 keys, 3·32 + 4 queries), causal with queries aligned
// to the last keys (seq_q 37 < seq_kv 100), MHA and MQA.
TEST(Functional, Flash1BackwardGradientsMatchReferenceInDouble) {
  for (bool causal : {false, true})
    for (std::uint64_t kvh : {4, 1})
      for (std::uint64_t nq : {100, 37}) {
        core::Workload w = small("flash1");
        w.pass = core::Pass::kFwdBwd;
        w.causal = causal;
        w.kv_heads = kvh;
        w.seq_q = nq;
        EXPECT_LE(functional_error(w), 1e-12) << "causal " << causal << " kv_heads " << kvh << " nq " << nq;
      }
}

TEST(Functional, FlashDecodeSplitsCombineToAttention) {
  for (std::uint64_t splits : {1, 3, 7})
    for (bool causal : {false, true}) {
      core::Workload w = small("flash_decode");
      w.seq_q = 2;
      w.seq_kv = 300;
      w.block_n = 32;
      w.num_splits = splits;
      w.causal = causal;
      EXPECT_LE(functional_error(w), 1e-12) << splits << " splits";
    }
}

// The functional reference agrees with the numerics engineer's independent standard_attention.
TEST(Functional, ReferenceAgreesWithNumericsStandardAttention) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0, 1);
  Matrix q(10, 8), k(30, 8), v(30, 8);
  for (auto* m : {&q, &k, &v})
    for (double& x : m->values) x = n(rng);
  const Matrix a = standard_attention(q, k, v);
  const Matrix b = online_attention(q, k, v, 7);
  double diff = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) diff = std::max(diff, std::abs(a.values[i] - b.values[i]));
  EXPECT_LE(diff, 1e-12);
}

// Storage rounding: inputs, P blocks and O rounded to fp16/bf16. Bound: each stored P value
// carries relative error u, O = Σ p v then has absolute error ≤ u·Σ p|v| ≤ u·max|v| (≈ 3.5 for
// these random inputs) plus u|O| for storing O; against max|O| (≥ 0.5 here) that is ≤ 8u.
TEST(Functional, Fp16AndBf16StorageErrorWithinUnitRoundoffBound) {
  for (Precision prec : {Precision::kFp16, Precision::kBf16})
    for (const char* k : {"flash2", "flash1"}) {
      const double e = functional_error(small(k), prec);
      EXPECT_GT(e, 0.0) << k;  // rounding is applied
      EXPECT_LE(e, 8 * unit_roundoff(prec)) << k << " " << to_string(prec);
    }
}

TEST(Functional, StandardStoresRoundedScoresAndProbabilities) {
  const double e16 = functional_error(small("standard"), Precision::kFp16);
  EXPECT_GT(e16, 0.0);
  EXPECT_LE(e16, 16 * unit_roundoff(Precision::kFp16));
}

// The poll overload: called at least once per query row of the schedule and of the reference,
// the result unchanged; an exception from it ends the computation (a stop request).
TEST(Functional, PollIsCalledPerRowWithoutChangingTheResultAndItsExceptionStopsTheRun) {
  struct Stop {};
  for (const char* k : {"flash1", "flash2", "standard", "flash_decode"})
    for (core::Pass pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
      if (pass == core::Pass::kFwdBwd && std::string(k) == "flash_decode") continue;  // forward only
      core::Workload w = small(k);
      w.pass = pass;
      w.num_splits = 2;
      const core::TileProgram p = make_program(w, testing::small_gpu());
      std::uint64_t calls = 0;
      const double with_poll = run_functional(p.workload, Precision::kFp64, [&calls] { ++calls; });
      EXPECT_EQ(with_poll, run_functional(p.workload, Precision::kFp64)) << k;
      EXPECT_GE(calls, 2 * p.workload.seq_q) << k;  // the reference's rows and the schedule's
      std::uint64_t left = calls / 2;
      EXPECT_THROW(run_functional(p.workload, Precision::kFp64,
                                  [&left] {
                                    if (left-- == 0) throw Stop{};
                                  }),
                   Stop)
          << k;
    }
}

}  // namespace
}  // namespace attnsim::kernels
