#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>

#include "kernels/precision.h"

namespace attnsim::kernels {
namespace {

double p2(int e) { return std::ldexp(1.0, e); }

// Expected bit patterns below are derived by hand from the IEEE 754 binary16 layout
// (1 sign, 5 exponent bits with bias 15, 10 mantissa bits) and bfloat16 (1, 8 bias 127, 7).

TEST(Fp16Rounding, OneAndAPlainValueEncodeToTheirBitPatterns) {
  EXPECT_EQ(encode_bits(1.0, Precision::kFp16), 0x3C00u);    // 0 01111 0000000000
  EXPECT_EQ(encode_bits(-2.0, Precision::kFp16), 0xC000u);   // 1 10000 0000000000
  // 0.1 = 1.6 * 2^-4: exponent 11 = 01011, mantissa round(0.6 * 1024 = 614.4) = 614 = 0x266.
  EXPECT_EQ(encode_bits(0.1, Precision::kFp16), 0x2E66u);
}

TEST(Fp16Rounding, TieRoundsDownToEvenMantissa) {
  // 1 + 2^-11 lies halfway between 1 (mantissa 0, even) and 1 + 2^-10 (mantissa 1).
  EXPECT_EQ(encode_bits(1.0 + p2(-11), Precision::kFp16), 0x3C00u);
  EXPECT_EQ(round_to(1.0 + p2(-11), Precision::kFp16), 1.0);
}

TEST(Fp16Rounding, TieRoundsUpToEvenMantissa) {
  // 1 + 3 * 2^-11 lies halfway between mantissa 1 (odd) and mantissa 2 (even).
  EXPECT_EQ(encode_bits(1.0 + 3 * p2(-11), Precision::kFp16), 0x3C02u);
}

TEST(Fp16Rounding, JustAboveATieRoundsUp) {
  EXPECT_EQ(encode_bits(1.0 + p2(-11) + p2(-30), Precision::kFp16), 0x3C01u);
}

TEST(Fp16Rounding, SubnormalsKeepGradualUnderflow) {
  EXPECT_EQ(encode_bits(p2(-14), Precision::kFp16), 0x0400u);      // smallest normal
  EXPECT_EQ(encode_bits(p2(-24), Precision::kFp16), 0x0001u);      // smallest subnormal
  EXPECT_EQ(encode_bits(p2(-25), Precision::kFp16), 0x0000u);      // tie between 0 and 2^-24 -> 0
  EXPECT_EQ(encode_bits(3 * p2(-25), Precision::kFp16), 0x0002u);  // tie between 1 and 2 ulps -> 2
  EXPECT_EQ(encode_bits(p2(-25) + p2(-40), Precision::kFp16), 0x0001u);
  EXPECT_EQ(round_to(1000 * p2(-24) + 0.25 * p2(-24), Precision::kFp16), 1000 * p2(-24));
}

TEST(Fp16Rounding, OverflowGoesToInfinityFromMaxPlusHalfUlp) {
  EXPECT_EQ(encode_bits(65504.0, Precision::kFp16), 0x7BFFu);      // 0 11110 1111111111
  EXPECT_EQ(encode_bits(65519.0, Precision::kFp16), 0x7BFFu);      // below max + ulp/2 = 65520
  EXPECT_EQ(encode_bits(65520.0, Precision::kFp16), 0x7C00u);      // the tie goes to even: inf
  EXPECT_EQ(encode_bits(-1e6, Precision::kFp16), 0xFC00u);
  EXPECT_TRUE(std::isinf(round_to(1e6, Precision::kFp16)));
}

TEST(Fp16Rounding, NanStaysNanAndSignedZeroKeepsItsSign) {
  const auto bits = encode_bits(std::numeric_limits<double>::quiet_NaN(), Precision::kFp16);
  EXPECT_EQ(bits & 0x7C00u, 0x7C00u);
  EXPECT_NE(bits & 0x03FFu, 0u);
  EXPECT_TRUE(std::isnan(round_to(std::nan(""), Precision::kFp16)));
  EXPECT_EQ(encode_bits(-0.0, Precision::kFp16), 0x8000u);
}

TEST(Bf16Rounding, OneAndAPlainValueEncodeToTheirBitPatterns) {
  EXPECT_EQ(encode_bits(1.0, Precision::kBf16), 0x3F80u);  // 0 01111111 0000000
  // 0.1 = 1.6 * 2^-4: exponent 123 = 01111011, mantissa round(0.6 * 128 = 76.8) = 77 = 0x4D.
  EXPECT_EQ(encode_bits(0.1, Precision::kBf16), 0x3DCDu);
}

TEST(Bf16Rounding, TiesRoundToEvenMantissa) {
  EXPECT_EQ(encode_bits(1.0 + p2(-8), Precision::kBf16), 0x3F80u);
  EXPECT_EQ(encode_bits(1.0 + 3 * p2(-8), Precision::kBf16), 0x3F82u);
}

TEST(Bf16Rounding, SubnormalsKeepGradualUnderflow) {
  EXPECT_EQ(encode_bits(p2(-133), Precision::kBf16), 0x0001u);  // 2^(-126-7)
  EXPECT_EQ(encode_bits(p2(-134), Precision::kBf16), 0x0000u);  // tie -> even (zero)
  EXPECT_EQ(encode_bits(3 * p2(-134), Precision::kBf16), 0x0002u);
}

TEST(Bf16Rounding, OverflowGoesToInfinityFromMaxPlusHalfUlp) {
  const double max = (2.0 - p2(-7)) * p2(127);
  EXPECT_EQ(max_finite(Precision::kBf16), max);
  EXPECT_EQ(encode_bits(max, Precision::kBf16), 0x7F7Fu);
  EXPECT_EQ(encode_bits((2.0 - p2(-8)) * p2(127), Precision::kBf16), 0x7F80u);  // max + ulp/2
  EXPECT_EQ(encode_bits((2.0 - p2(-7) + p2(-9)) * p2(127), Precision::kBf16), 0x7F7Fu);
}

TEST(Bf16Rounding, MatchesRoundingTheFloatBitPatternForRandomFloats) {
  // Independent rule: bf16 = upper 16 bits of the fp32 pattern, rounded to nearest even.
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::uint32_t> bits(0, 0x7F7FFFFFu);
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t b = bits(rng) | ((i & 1) ? 0x80000000u : 0u);
    const double x = std::bit_cast<float>(b);
    const std::uint32_t expected = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
    ASSERT_EQ(encode_bits(x, Precision::kBf16), expected) << std::hex << b;
  }
}

TEST(Fp32Rounding, MatchesTheHardwareDoubleToFloatConversion) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mantissa(0.5, 1.0);
  std::uniform_int_distribution<int> exponent(-160, 140);  // subnormals and overflow included
  for (int i = 0; i < 20000; ++i) {
    const double x = std::ldexp(mantissa(rng), exponent(rng)) * ((i & 1) ? -1.0 : 1.0);
    ASSERT_EQ(round_to(x, Precision::kFp32), static_cast<double>(static_cast<float>(x))) << x;
    ASSERT_EQ(encode_bits(x, Precision::kFp32), std::bit_cast<std::uint32_t>(static_cast<float>(x)));
  }
}

TEST(Fp8E4M3Rounding, EncodesOneMaxAndSubnormalAndSaturates) {
  EXPECT_EQ(encode_bits(1.0, Precision::kFp8E4M3), 0x38u);    // 0 0111 000
  EXPECT_EQ(encode_bits(448.0, Precision::kFp8E4M3), 0x7Eu);  // 0 1111 110 = 1.75 * 2^8
  EXPECT_EQ(encode_bits(1000.0, Precision::kFp8E4M3), 0x7Eu); // saturates, no infinity
  EXPECT_EQ(encode_bits(p2(-9), Precision::kFp8E4M3), 0x01u); // 2^(-6-3)
  EXPECT_EQ(encode_bits(std::nan(""), Precision::kFp8E4M3), 0x7Fu);
  EXPECT_TRUE(std::isnan(decode_bits(0x7F, Precision::kFp8E4M3)));
}

TEST(StoragePrecision, EveryFp16AndBf16PatternRoundTrips) {
  for (Precision p : {Precision::kFp16, Precision::kBf16}) {
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
      const double v = decode_bits(b, p);
      if (std::isnan(v)) continue;
      ASSERT_EQ(encode_bits(v, p), b) << to_string(p) << " " << std::hex << b;
      ASSERT_EQ(round_to(v, p), v);
    }
  }
}

TEST(StoragePrecision, RelativeErrorWithinUnitRoundoffInTheNormalRange) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> mantissa(0.5, 1.0);
  std::uniform_int_distribution<int> exponent(-10, 12);
  // Smallest normal numbers: fp8 e4m3 2^-6, fp16 2^-14, bf16 and fp32 2^-126.
  const std::pair<Precision, double> formats[] = {{Precision::kFp32, p2(-126)},
                                                  {Precision::kFp16, p2(-14)},
                                                  {Precision::kBf16, p2(-126)},
                                                  {Precision::kFp8E4M3, p2(-6)}};
  for (const auto& [p, min_normal] : formats) {
    double worst = 0.0;
    for (int i = 0; i < 20000; ++i) {
      const double x = std::ldexp(mantissa(rng), exponent(rng));
      if (x > max_finite(p) || x < min_normal) continue;
      worst = std::max(worst, std::fabs(round_to(x, p) - x) / x);
    }
    EXPECT_LE(worst, unit_roundoff(p)) << to_string(p);
    EXPECT_GT(worst, 0.5 * unit_roundoff(p)) << to_string(p);  // the bound is nearly attained
  }
}

TEST(StoragePrecision, UnitRoundoffIsTwoToMinusSignificandBits) {
  EXPECT_EQ(unit_roundoff(Precision::kFp16), p2(-11));
  EXPECT_EQ(unit_roundoff(Precision::kBf16), p2(-8));
  EXPECT_EQ(unit_roundoff(Precision::kFp32), p2(-24));
  EXPECT_EQ(unit_roundoff(Precision::kFp8E4M3), p2(-4));
}

TEST(StoragePrecision, NamesRoundTrip) {
  for (Precision p : {Precision::kFp64, Precision::kFp32, Precision::kFp16, Precision::kBf16,
                      Precision::kFp8E4M3}) {
    EXPECT_EQ(parse_precision(to_string(p)), p);
  }
  EXPECT_FALSE(parse_precision("fp12").has_value());
}

}  // namespace
}  // namespace attnsim::kernels
