// Functional mode's end-to-end error (functional_errors().rmse): exact in double, the input
// rotation of incoherent processing is orthogonal, and on the FA-3 paper's outlier inputs the
// paper's two FP8 measures (block scales, incoherent processing) lower flash3's error.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "kernels/functional.h"
#include "kernels/registry.h"
#include "sim/config/device_loader.h"

namespace attnsim::kernels {
namespace {

core::Workload fa3_fp8(core::FunctionalInputs inputs, core::Fp8Scales scales, bool incoherent, std::uint64_t seed) {
  core::Workload w;
  w.kernel = "flash3";
  w.heads = 1;
  w.seq_q = w.seq_kv = 512;
  w.head_dim = 128;
  w.dtype = core::DType::kFp8;
  w.functional_inputs = inputs;
  w.fp8_scales = scales;
  w.incoherent_processing = incoherent;
  w.seed = seed;
  return make_program(w, config::load_device("h100-sxm")).workload;
}

// Square root of the mean square of the RMSEs over seeds 1 ... 4 (equal element counts).
double pooled_rmse(core::FunctionalInputs inputs, core::Fp8Scales scales, bool incoherent,
                   Precision storage = Precision::kFp8E4M3) {
  double sum = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const double e = functional_errors(fa3_fp8(inputs, scales, incoherent, seed), storage).rmse;
    sum += e * e;
  }
  return std::sqrt(sum / 4);
}

using core::Fp8Scales;
using core::FunctionalInputs;

TEST(FunctionalRmse, ExactInDoubleWithAndWithoutTheRotation) {
  for (bool incoherent : {false, true})
    for (auto inputs : {FunctionalInputs::kNormal, FunctionalInputs::kOutliers}) {
      const FunctionalErrors e = functional_errors(fa3_fp8(inputs, Fp8Scales::kHead, incoherent, 3), Precision::kFp64);
      EXPECT_LT(e.max_rel_error, 1e-12) << incoherent;
      EXPECT_LT(e.rmse, 1e-13) << incoherent;  // Q M (K M)^T = Q K^T: M is orthogonal
      EXPECT_GT(e.rmse, 0.0) << incoherent;    // rounding of double itself
    }
}

TEST(FunctionalRmse, CountsTheInputsRoundingThatMaxRelErrorLeavesOut) {
  // max_rel_error compares with attention on the stored inputs, rmse with attention on the raw
  // ones: the rmse of each storage precision is at least ten times that of the next finer one.
  const core::Workload w = fa3_fp8(FunctionalInputs::kNormal, Fp8Scales::kHead, false, 1);
  const double fp32 = functional_errors(w, Precision::kFp32).rmse, fp16 = functional_errors(w, Precision::kFp16).rmse,
               fp8 = functional_errors(w, Precision::kFp8E4M3).rmse;
  EXPECT_LT(fp32, 1e-6);
  EXPECT_GT(fp16, 10 * fp32);
  EXPECT_GT(fp8, 10 * fp16);
  std::cout << "flash3 functional rmse, d128 N512 N(0,1) inputs: fp32 " << fp32 << ", fp16 " << fp16 << ", fp8 " << fp8
            << "\n";
}

TEST(FunctionalRmse, OutliersAreWhatBlockScalesAndIncoherentProcessingAreFor) {
  // FA-3 paper's outlier inputs: per-head scales beat none, and block scales with incoherent
  // processing beat per-head scales (the paper: 2.4e-2 -> 9.1e-3, docs/references.md).
  const double none = pooled_rmse(FunctionalInputs::kOutliers, Fp8Scales::kNone, false);
  const double head = pooled_rmse(FunctionalInputs::kOutliers, Fp8Scales::kHead, false);
  const double fa3 = pooled_rmse(FunctionalInputs::kOutliers, Fp8Scales::kBlock, true);
  EXPECT_LT(head, none);
  EXPECT_LT(fa3 * 1.15, head);
  // Without outliers the rotation and the scales change little: e4m3 keeps its relative
  // precision at any scale, and there is nothing to spread.
  const double plain = pooled_rmse(FunctionalInputs::kNormal, Fp8Scales::kHead, false);
  const double plain_fa3 = pooled_rmse(FunctionalInputs::kNormal, Fp8Scales::kBlock, true);
  EXPECT_NEAR(plain_fa3 / plain, 1.0, 0.1);
  EXPECT_LT(plain, head / 2);  // the outliers are what makes FP8 attention inaccurate
  std::cout << "flash3 fp8 rmse, d128 N512, 4 seeds: outliers none " << none << ", head " << head
            << ", block + incoherent " << fa3 << "; N(0,1) head " << plain << ", block + incoherent " << plain_fa3
            << "\n";
}

}  // namespace
}  // namespace attnsim::kernels
