#include "kernels/precision.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace attnsim::kernels {

namespace {

// A binary floating-point format: `precision` significand bits (with the implicit one),
// exponents of normal numbers in [emin, emax], `mantissa_bits` = precision - 1 stored bits.
struct Format {
  int precision;
  int emin;
  int emax;
  int exponent_bits;
  int bias;
  bool has_inf;
  double max_finite;
  std::uint64_t quiet_nan;
};

Format format_of(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return {24, -126, 127, 8, 127, true, std::ldexp(2.0 - std::ldexp(1.0, -23), 127), 0x7FC00000u};
    case Precision::kFp16:
      return {11, -14, 15, 5, 15, true, 65504.0, 0x7E00u};
    case Precision::kBf16:
      return {8, -126, 127, 8, 127, true, std::ldexp(2.0 - std::ldexp(1.0, -7), 127), 0x7FC0u};
    case Precision::kFp8E4M3:
      // Exponent field 1111 is a normal binade except mantissa 111 (NaN): max = 1.75 * 2^8.
      return {4, -6, 8, 4, 7, false, 448.0, 0x7Fu};
    case Precision::kFp64:
      break;
  }
  return {53, -1022, 1023, 11, 1023, true, std::numeric_limits<double>::max(), 0x7FF8000000000000u};
}

// Rounds a finite non-negative y to the nearest integer, ties to even, whatever the FPU mode.
double round_half_even(double y) {
  const double lower = std::floor(y);
  const double diff = y - lower;
  if (diff > 0.5) return lower + 1.0;
  if (diff < 0.5) return lower;
  return std::fmod(lower, 2.0) == 0.0 ? lower : lower + 1.0;
}

}  // namespace

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::kFp64: return "fp64";
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kFp8E4M3: return "fp8";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view s) {
  if (s == "fp64") return Precision::kFp64;
  if (s == "fp32") return Precision::kFp32;
  if (s == "fp16") return Precision::kFp16;
  if (s == "bf16") return Precision::kBf16;
  if (s == "fp8" || s == "fp8e4m3") return Precision::kFp8E4M3;
  return std::nullopt;
}

double unit_roundoff(Precision p) { return std::ldexp(1.0, -format_of(p).precision); }

double max_finite(Precision p) { return format_of(p).max_finite; }

double round_to(double x, Precision p) {
  if (p == Precision::kFp64 || std::isnan(x) || x == 0.0) return x;
  const Format f = format_of(p);
  const double sign = std::signbit(x) ? -1.0 : 1.0;
  const double a = std::fabs(x);
  if (std::isinf(a)) return f.has_inf ? x : sign * f.max_finite;
  int exp2 = 0;
  std::frexp(a, &exp2);  // a = frac * 2^exp2, frac in [0.5, 1): binade exponent is exp2 - 1
  const int e = std::max(exp2 - 1, f.emin);  // below emin the spacing stays that of subnormals
  const int quantum_exp = e - (f.precision - 1);
  const double r = std::ldexp(round_half_even(std::ldexp(a, -quantum_exp)), quantum_exp);
  if (r > f.max_finite) {
    return f.has_inf ? sign * std::numeric_limits<double>::infinity() : sign * f.max_finite;
  }
  return sign * r;
}

std::uint64_t encode_bits(double x, Precision p) {
  if (p == Precision::kFp64) return std::bit_cast<std::uint64_t>(x);
  const Format f = format_of(p);
  const int mantissa_bits = f.precision - 1;
  const std::uint64_t sign_bit = std::uint64_t{1} << (f.exponent_bits + mantissa_bits);
  if (std::isnan(x)) return f.quiet_nan;
  const double r = round_to(x, p);
  const std::uint64_t sign = std::signbit(r) ? sign_bit : 0;
  const double a = std::fabs(r);
  const std::uint64_t exp_all_ones = (std::uint64_t{1} << f.exponent_bits) - 1;
  if (std::isinf(a)) return sign | (exp_all_ones << mantissa_bits);
  if (a == 0.0) return sign;
  int exp2 = 0;
  std::frexp(a, &exp2);
  const int e = exp2 - 1;
  if (e < f.emin) {  // subnormal: mantissa counts units of 2^(emin - mantissa_bits)
    const auto mantissa = static_cast<std::uint64_t>(std::ldexp(a, mantissa_bits - f.emin));
    return sign | mantissa;
  }
  const auto biased = static_cast<std::uint64_t>(e + f.bias);
  const auto mantissa =
      static_cast<std::uint64_t>(std::ldexp(a, mantissa_bits - e)) - (std::uint64_t{1} << mantissa_bits);
  return sign | (biased << mantissa_bits) | mantissa;
}

double decode_bits(std::uint64_t bits, Precision p) {
  if (p == Precision::kFp64) return std::bit_cast<double>(bits);
  const Format f = format_of(p);
  const int mantissa_bits = f.precision - 1;
  const std::uint64_t mantissa_mask = (std::uint64_t{1} << mantissa_bits) - 1;
  const std::uint64_t exp_all_ones = (std::uint64_t{1} << f.exponent_bits) - 1;
  const std::uint64_t mantissa = bits & mantissa_mask;
  const std::uint64_t biased = (bits >> mantissa_bits) & exp_all_ones;
  const bool negative = ((bits >> (mantissa_bits + f.exponent_bits)) & 1u) != 0;
  const double sign = negative ? -1.0 : 1.0;
  if (f.has_inf && biased == exp_all_ones) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  }
  if (!f.has_inf && biased == exp_all_ones && mantissa == mantissa_mask) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (biased == 0) return sign * std::ldexp(static_cast<double>(mantissa), f.emin - mantissa_bits);
  const double significand = 1.0 + std::ldexp(static_cast<double>(mantissa), -mantissa_bits);
  return sign * std::ldexp(significand, static_cast<int>(biased) - f.bias);
}

}  // namespace attnsim::kernels
