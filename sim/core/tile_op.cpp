// Names of tensors, tile-op kinds and MMA flavours, for reports and traces (tile_op.h).
#include "sim/core/tile_op.h"

namespace attnsim::core {

namespace {
constexpr std::array<std::string_view, kNumTensors> kTensorNames = {
    "Q", "K", "V", "S", "P", "O", "m", "l", "LSE", "dO", "dQ", "dK", "dV", "dS", "dP",
    "Delta", "O_partial", "LSE_partial", "dQ_accum", "buffer", "local", "mask"};
constexpr std::array<std::string_view, 17> kOpKindNames = {
    "load",   "store", "shared_read", "shared_write", "mma",        "exp",      "elementwise", "barrier",     "commit",
    "wait",   "issue", "mbar_arrive", "mbar_wait",    "mma_commit", "mma_wait", "named_sync",  "named_arrive"};
static_assert(static_cast<std::size_t>(OpKind::kNamedArrive) + 1 == kOpKindNames.size(), "a name per OpKind");
constexpr std::array<std::string_view, 4> kFlavourNames = {"default", "mma_sync", "wgmma", "tcgen05"};
}  // namespace

std::string_view to_string(OpKind k) {
  auto i = static_cast<std::size_t>(k);
  return i < kOpKindNames.size() ? kOpKindNames[i] : "?";
}

std::string_view to_string(MmaFlavour f) {
  auto i = static_cast<std::size_t>(f);
  return i < kFlavourNames.size() ? kFlavourNames[i] : "?";
}

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
