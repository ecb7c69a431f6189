// Basic unit types and data types shared by every layer.
// Units are named aliases (Bytes, Cycles) so signatures say what a number is; no arithmetic guards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <optional>

namespace attnsim::core {

using Bytes = std::uint64_t;        // a byte count or byte address
using Cycles = std::uint64_t;       // SM clock cycles (the engine's time base)
using Count = std::uint64_t;        // a plain count (CTAs, blocks, events)

enum class DType : std::uint8_t { kFp32, kFp16, kBf16, kFp8 };

constexpr Bytes bytes_per_value(DType t) {
  switch (t) {
    case DType::kFp32: return 4;
    case DType::kFp16: return 2;
    case DType::kBf16: return 2;
    case DType::kFp8: return 1;
  }
  return 0;
}

std::string_view to_string(DType t);
std::optional<DType> parse_dtype(std::string_view s);  // "fp32", "fp16", "bf16", "fp8"

constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace attnsim::core
