// Emulated storage precisions (fp32, fp16, bf16, fp8 e4m3): round a double to the format
// with round-to-nearest-even and back. Storage only: no emulated arithmetic, no stochastic rounding.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace attnsim::kernels {

// kFp64 means "no rounding" (values are kept as doubles).
enum class Precision : std::uint8_t { kFp64, kFp32, kFp16, kBf16, kFp8E4M3 };

std::string_view to_string(Precision p);             // "fp64", "fp32", "fp16", "bf16", "fp8"
std::optional<Precision> parse_precision(std::string_view s);

// Unit roundoff u = 2^-p, p = significand bits including the implicit bit
// (fp16 2^-11, bf16 2^-8, fp32 2^-24, fp8 e4m3 2^-4, fp64 2^-53). For a value x in the
// normal range, |round_to(x) - x| <= u |x|.
double unit_roundoff(Precision p);

// Largest finite value of the format (fp16 65504, bf16 ~3.39e38, fp8 e4m3 448).
double max_finite(Precision p);

// Rounds x to the nearest value representable in `p`, ties to even, independent of the FPU
// rounding mode. Subnormals are kept (gradual underflow); the sign of zero is kept.
// Overflow: fp32/fp16/bf16 round to +-inf as IEEE 754 does (|x| >= max + ulp/2);
// fp8 e4m3 (OCP "FN" variant, no infinities) saturates finite overflow and +-inf to +-448
// (CUDA's __NV_SATFINITE conversion). NaN stays NaN.
double round_to(double x, Precision p);

// Bit pattern of round_to(x, p) in the format (fp32 in the low 32 bits, fp16/bf16 in the low
// 16, fp8 in the low 8). NaN encodes as the canonical quiet NaN (fp16 0x7E00, bf16 0x7FC0,
// fp32 0x7FC00000, fp8 0x7F). Not defined for kFp64 (returns the raw double bits).
std::uint64_t encode_bits(double x, Precision p);

// Value of a bit pattern in the format (the inverse of encode_bits on representable values).
double decode_bits(std::uint64_t bits, Precision p);

}  // namespace attnsim::kernels
