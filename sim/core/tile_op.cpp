#include "sim/core/tile_op.h"

namespace attnsim::core {

namespace {
constexpr std::array<std::string_view, kNumTensors> kTensorNames = {
    "Q", "K", "V", "S", "P", "O", "m", "l", "LSE", "dO", "dQ", "dK", "dV", "dS", "dP",
    "Delta", "O_partial", "LSE_partial", "dQ_accum", "buffer", "local", "mask"};
}  // namespace

std::string_view to_string(Tensor t) {
  auto i = static_cast<std::size_t>(t);
  return i < kNumTensors ? kTensorNames[i] : "?";
}

std::optional<Tensor> parse_tensor(std::string_view s) {
  for (std::size_t i = 0; i < kNumTensors; ++i)
    if (kTensorNames[i] == s) return static_cast<Tensor>(i);
  return std::nullopt;
}

}  // namespace attnsim::core
