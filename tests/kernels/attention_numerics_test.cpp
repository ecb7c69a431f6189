#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "kernels/attention_numerics.h"

namespace attnsim::kernels {
namespace {

Matrix random_matrix(std::size_t rows, std::size_t cols, double scale, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Matrix m(rows, cols);
  for (double& x : m.values) x = u(rng);
  return m;
}

double max_abs(const Vector& x) {
  double m = 0.0;
  for (double e : x) m = std::max(m, std::fabs(e));
  return m;
}

double max_abs_diff(const Vector& a, const Vector& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

Matrix rounded(Matrix m, Precision p) {
  for (double& x : m.values) x = round_to(x, p);
  return m;
}

TEST(AttentionNumerics, SeedExampleByteCounts) {
  EXPECT_EQ(score_bytes(4096), 33'554'432u);
  EXPECT_EQ(score_bytes(4096), 32u * 1024 * 1024);
  EXPECT_EQ(tile_bytes(128), 32'768u);
  EXPECT_EQ(tile_bytes(128), 32u * 1024);
  EXPECT_EQ(num_blocks(4096, 128), 32u);
  EXPECT_EQ(score_bytes(4096, 4), 64u * 1024 * 1024);
}

TEST(AttentionNumerics, NumBlocksCountsTheRaggedLastBlock) {
  EXPECT_EQ(num_blocks(4097, 128), 33u);
  EXPECT_EQ(num_blocks(100, 128), 1u);
  EXPECT_EQ(num_blocks(1, 1), 1u);
}

TEST(StandardAttention, TwoKeysMatchHandComputedWeights) {
  // Scores 0 and ln 3 -> softmax weights 1/4 and 3/4 -> o = 4/4 + 3*8/4 = 7.
  Matrix k(2, 1);
  k(1, 0) = std::log(3.0);
  Matrix v(2, 1);
  v(0, 0) = 4.0;
  v(1, 0) = 8.0;
  const Vector o = standard_attention(Vector{1.0}, k, v);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_NEAR(o[0], 7.0, 1e-14);
}

TEST(StandardAttention, ShapeMismatchThrows) {
  EXPECT_THROW(standard_attention(Vector{1.0, 2.0}, Matrix(3, 1), Matrix(3, 1)), std::invalid_argument);
  EXPECT_THROW(standard_attention(Vector{1.0}, Matrix(3, 1), Matrix(2, 1)), std::invalid_argument);
  EXPECT_THROW(standard_attention(Vector{1.0}, Matrix(0, 1), Matrix(0, 1)), std::invalid_argument);
}

TEST(OnlineAttention, EqualsStandardForEveryBlockSizeInDouble) {
  std::mt19937_64 rng(20240601);
  const std::size_t n = 37;  // prime: every block size from 2 to 36 leaves a ragged last block
  const Matrix k = random_matrix(n, 8, 1.0, rng);
  const Matrix v = random_matrix(n, 5, 1.0, rng);
  const Matrix qm = random_matrix(1, 8, 3.0, rng);  // scores spread over several units
  const Vector q = qm.row(0);
  const Vector expected = standard_attention(q, k, v);
  for (std::int64_t block = 1; block <= static_cast<std::int64_t>(n) + 3; ++block) {
    const Vector got = online_attention(q, k, v, block);
    ASSERT_LE(max_abs_diff(got, expected), 1e-12 * max_abs(expected)) << "block " << block;
  }
}

TEST(OnlineAttention, MatrixFormEqualsStandardForEveryBlockSizeInDouble) {
  std::mt19937_64 rng(77);
  const std::size_t n = 29;
  const Matrix q = random_matrix(6, 16, 2.0, rng);
  const Matrix k = random_matrix(n, 16, 1.0, rng);
  const Matrix v = random_matrix(n, 16, 1.0, rng);
  const Matrix expected = standard_attention(q, k, v);
  ASSERT_EQ(expected.rows, 6u);
  ASSERT_EQ(expected.cols, 16u);
  for (std::int64_t block = 1; block <= static_cast<std::int64_t>(n) + 2; ++block) {
    const Matrix got = online_attention(q, k, v, block);
    ASSERT_LE(max_abs_diff(got.values, expected.values), 1e-12 * max_abs(expected.values))
        << "block " << block;
  }
}

TEST(OnlineAttention, BlockBelowOneThrows) {
  const Matrix k(4, 2, 1.0), v(4, 2, 1.0);
  EXPECT_THROW(online_attention(Vector{1.0, 0.0}, k, v, 0), std::invalid_argument);
  EXPECT_THROW(online_attention(Vector{1.0, 0.0}, k, v, -3), std::invalid_argument);
  EXPECT_THROW(online_attention(Matrix(2, 2), k, v, 0), std::invalid_argument);
}

TEST(OnlineAttention, HugeScoresStayFiniteAndExact) {
  // Scores 999 then 1000: exp() of either overflows, the running max keeps it exact.
  // Weights: 1/(1+e) and e/(1+e) for the second -> o = (1*1 + 3e)/(1+e) with values 1 and 3.
  Matrix k(2, 1);
  k(0, 0) = 999.0;
  k(1, 0) = 1000.0;
  Matrix v(2, 1);
  v(0, 0) = 1.0;
  v(1, 0) = 3.0;
  const double e = std::exp(1.0);
  const Vector o = online_attention(Vector{1.0}, k, v, 1);
  EXPECT_NEAR(o[0], (1.0 + 3.0 * e) / (1.0 + e), 1e-14);
}

// Storage-precision bounds. Inputs are rounded to the format first, so exact and emulated runs
// see the same q, K, V. u = unit roundoff, eta = half the subnormal spacing (absolute error of a
// rounded value below the normal range), n = number of keys, Vmax = max |v|.
// - online: only P is stored; acc/ℓ = Σ e_j (1+ε_j) v_j / Σ e_j with |e_j ε_j| <= u e_j + eta and
//   ℓ >= 1 (it contains exp(0)), so |o − o_exact| <= Vmax (u + n eta).
// - standard: S is stored too, |s̃_j − s_j| <= δ = u Smax + eta, which moves every softmax
//   weight by a factor within exp(±2δ), so Σ|p'_j − p_j| <= exp(2δ) − 1; storing P adds
//   u p'_j + eta each: |o − o_exact| <= Vmax (u + n eta + exp(2δ) − 1).
// A 1e-12 slack covers double arithmetic.
struct BoundCase {
  Precision precision;
  double eta;
};

class StorageBound : public ::testing::TestWithParam<BoundCase> {};

TEST_P(StorageBound, OnlineErrorWithinUnitRoundoffBound) {
  const auto [p, eta] = GetParam();
  std::mt19937_64 rng(1234);
  const std::size_t n = 200;
  const Matrix k = rounded(random_matrix(n, 16, 1.0, rng), p);
  const Matrix v = rounded(random_matrix(n, 8, 1.0, rng), p);
  const Matrix q = rounded(random_matrix(4, 16, 0.5, rng), p);
  const double u = unit_roundoff(p);
  const double bound = max_abs(v.values) * (u + n * eta) + 1e-12;
  double worst = 0.0;
  for (std::int64_t block : {1, 16, 64, 200, 333}) {
    const Matrix exact = online_attention(q, k, v, block);
    const Matrix emulated = online_attention(q, k, v, block, p);
    const double err = max_abs_diff(emulated.values, exact.values);
    EXPECT_LE(err, bound) << to_string(p) << " block " << block;
    worst = std::max(worst, err);
  }
  EXPECT_GT(worst, 0.0) << "storage rounding had no effect";
}

TEST_P(StorageBound, StandardErrorWithinUnitRoundoffBound) {
  const auto [p, eta] = GetParam();
  std::mt19937_64 rng(4321);
  const std::size_t n = 200;
  const Matrix k = rounded(random_matrix(n, 16, 1.0, rng), p);
  const Matrix v = rounded(random_matrix(n, 8, 1.0, rng), p);
  const Matrix q = rounded(random_matrix(4, 16, 0.5, rng), p);
  double smax = 0.0;
  for (std::size_t r = 0; r < q.rows; ++r)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (std::size_t c = 0; c < q.cols; ++c) s += q(r, c) * k(j, c);
      smax = std::max(smax, std::fabs(s));
    }
  const double u = unit_roundoff(p);
  const double delta = u * smax + eta;
  const double bound = max_abs(v.values) * (u + n * eta + std::expm1(2 * delta)) + 1e-12;
  const Matrix exact = standard_attention(q, k, v);
  const Matrix emulated = standard_attention(q, k, v, p);
  const double err = max_abs_diff(emulated.values, exact.values);
  EXPECT_LE(err, bound) << to_string(p);
  EXPECT_GT(err, 0.0) << "storage rounding had no effect";
}

INSTANTIATE_TEST_SUITE_P(AttentionNumerics, StorageBound,
                         ::testing::Values(BoundCase{Precision::kFp16, std::ldexp(1.0, -25)},
                                           BoundCase{Precision::kBf16, std::ldexp(1.0, -134)}),
                         [](const auto& info) { return std::string(to_string(info.param.precision)); });

TEST(StoragePrecisionAttention, InputsAreRoundedBeforeUse) {
  // q = (1 + 2^-12, 1) rounds to (1, 1) in fp16. Keys (4096, 0) and (0, 4096) give scores
  // 4097 and 4096 unrounded (weights sigmoid(1) and 1 - sigmoid(1)), 4096 and 4096 rounded
  // (weights 1/2 each). With values 1 and 0 the output is the first weight.
  Matrix k(2, 2);
  k(0, 0) = 4096.0;
  k(1, 1) = 4096.0;
  Matrix v(2, 1);
  v(0, 0) = 1.0;
  const Vector q{1.0 + std::ldexp(1.0, -12), 1.0};
  const double sigmoid1 = 1.0 / (1.0 + std::exp(-1.0));
  EXPECT_NEAR(online_attention(q, k, v, 1)[0], sigmoid1, 1e-12);
  EXPECT_NEAR(online_attention(q, k, v, 1, Precision::kFp16)[0], 0.5, 1e-12);
  EXPECT_NEAR(standard_attention(q, k, v, Precision::kFp16)[0], 0.5, 1e-12);
}

TEST(StoragePrecisionAttention, OrderingsRoundDifferentlyInFp16) {
  std::mt19937_64 rng(99);
  const Matrix k = random_matrix(64, 16, 1.0, rng);
  const Matrix v = random_matrix(64, 8, 1.0, rng);
  const Matrix q = random_matrix(2, 16, 1.0, rng);
  const Matrix standard = standard_attention(q, k, v, Precision::kFp16);
  const Matrix online = online_attention(q, k, v, 16, Precision::kFp16);
  EXPECT_GT(max_abs_diff(standard.values, online.values), 0.0);
}

TEST(OnlineSoftmaxTrace, FirstBlockOfTheLessonExample) {
  const SoftmaxTrace t = online_softmax_trace({1, 3, 2, 5, 4, 0, 6, 2}, 4);
  ASSERT_EQ(t.blocks.size(), 2u);
  EXPECT_EQ(t.blocks[0].index, 1u);
  EXPECT_EQ(t.blocks[0].m, 5.0);
  // ℓ = e^(1-5) + e^(3-5) + e^(2-5) + e^0 = 1.2034...
  EXPECT_NEAR(t.blocks[0].l, std::exp(-4.0) + std::exp(-2.0) + std::exp(-3.0) + 1.0, 1e-15);
  EXPECT_NEAR(t.blocks[0].l, 1.2034, 5e-5);
  EXPECT_TRUE(t.blocks[0].max_grew);
}

TEST(OnlineSoftmaxTrace, SecondBlockRescalesByExpOfMaxChange) {
  const SoftmaxTrace t = online_softmax_trace({1, 3, 2, 5, 4, 0, 6, 2}, 4);
  const double l1 = std::exp(-4.0) + std::exp(-2.0) + std::exp(-3.0) + 1.0;
  EXPECT_EQ(t.blocks[1].m_old, 5.0);
  EXPECT_EQ(t.blocks[1].m, 6.0);
  EXPECT_NEAR(t.blocks[1].rescale, std::exp(-1.0), 1e-16);
  EXPECT_NEAR(t.blocks[1].l, l1 * std::exp(-1.0) + std::exp(-2.0) + std::exp(-6.0) + 1.0 + std::exp(-4.0),
              1e-15);
}

TEST(OnlineSoftmaxTrace, FinalSoftmaxEqualsDirect) {
  const Vector s{1, 3, 2, 5, 4, 0, 6, 2};
  const SoftmaxTrace t = online_softmax_trace(s, 3);
  ASSERT_EQ(t.blocks.size(), 3u);  // 3 + 3 + 2 (ragged)
  EXPECT_EQ(t.blocks[2].scores.size(), 2u);
  double total = 0.0;
  for (double e : s) total += std::exp(e);
  for (std::size_t j = 0; j < s.size(); ++j) EXPECT_NEAR(t.direct_softmax[j], std::exp(s[j]) / total, 1e-15);
  EXPECT_LE(t.max_abs_difference, 1e-15);
}

TEST(OnlineSoftmaxTrace, NoRescaleWhenTheMaxDoesNotGrow) {
  const SoftmaxTrace t = online_softmax_trace({5, 1, 2, 3}, 2);
  EXPECT_FALSE(t.blocks[1].max_grew);
  EXPECT_EQ(t.blocks[1].rescale, 1.0);
  EXPECT_EQ(t.blocks[1].m, 5.0);
}

TEST(OnlineSoftmaxTrace, BlockBelowOneOrNoScoresThrows) {
  EXPECT_THROW(online_softmax_trace({1, 2}, 0), std::invalid_argument);
  EXPECT_THROW(online_softmax_trace({}, 2), std::invalid_argument);
}

}  // namespace
}  // namespace attnsim::kernels
