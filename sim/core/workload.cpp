#include "sim/core/workload.h"

#include <algorithm>

namespace attnsim::core {

const std::vector<std::string_view>& workload_keys() {
  static const std::vector<std::string_view> keys = {
      "kernel",     "batch",        "heads",           "kv_heads",     "seq",        "seq_q",
      "seq_kv",     "head_dim",     "dtype",           "causal",       "pass",       "block_m",
      "block_n",    "block_k",      "warps",           "stages",       "cta_order",  "regs_per_thread",
      "smem_per_cta", "num_splits", "sram_bytes",      "functional",   "seed",       "working_set_bytes",
      "loads",      "programs",     "bytes_per_step",  "total_bytes", "gemm_cluster",
      "stack_frame_bytes", "page_size", "page_placement", "page_seed", "kv_lengths",
      "impl", "gemm_ws", "qkv_packed", "scale_kernel", "pytorch", "consumer_warpgroups", "pingpong", "intrawg_overlap", "tma", "sim.mode",
      "sim.min_ops", "functional_inputs", "fp8_scales", "incoherent_processing"};
  return keys;
}

std::optional<std::pair<int, int>> parse_pytorch_release(std::string_view s) {
  int part[3] = {0, 0, 0}, n = 0, digits = 0;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      if (++digits > 4) return std::nullopt;
      part[n] = part[n] * 10 + (c - '0');
    } else if (c == '.' && digits > 0 && n < 2) {
      ++n;
      digits = 0;
    } else {
      return std::nullopt;
    }
  }
  if (n == 0 || digits == 0) return std::nullopt;
  return std::make_pair(part[0], part[1]);
}

SoftmaxEra softmax_era(const Workload& w) {
  const auto r = parse_pytorch_release(w.pytorch);
  if (!r || *r >= std::make_pair(2, 7)) return SoftmaxEra::kFrom27;
  return *r < std::make_pair(2, 4) ? SoftmaxEra::kBefore24 : SoftmaxEra::k24To26;
}

namespace {
// dispatch_softmax_forward / _backward (one warp per row) before 2.7: up to 1024 values and 4096 B.
bool warp_row_before_27(std::uint64_t cols, Bytes value_bytes) { return cols <= 1024 && cols * value_bytes <= 4096; }
}  // namespace

bool softmax_fits_smem_48k(std::uint64_t cols, Bytes value_bytes) {
  const std::uint64_t warps = (std::min<std::uint64_t>(cols, 1024) + 31) / 32;
  const Bytes vector = value_bytes ? std::max<Bytes>(1, 16 / value_bytes) : 1;
  return value_bytes > 0 && cols * value_bytes + warps * 4 < 49152 && cols % vector == 0;
}

bool softmax_three_pass(const Workload& w, std::uint64_t cols, Bytes value_bytes) {
  const SoftmaxEra era = softmax_era(w);
  if (era == SoftmaxEra::kFrom27 || warp_row_before_27(cols, value_bytes)) return false;
  return era == SoftmaxEra::kBefore24 || !softmax_fits_smem_48k(cols, value_bytes);
}

bool softmax_backward_rereads(const Workload& w, std::uint64_t cols, Bytes value_bytes) {
  return softmax_era(w) != SoftmaxEra::kFrom27 && !warp_row_before_27(cols, value_bytes);
}

std::string_view to_string(Pass p) { return p == Pass::kFwd ? "fwd" : "fwdbwd"; }
std::string_view to_string(CtaOrder o) { return o == CtaOrder::kRowMajor ? "row-major" : "head-major"; }
std::string_view to_string(PagePlacement p) { return p == PagePlacement::kContiguous ? "contiguous" : "shuffled"; }
std::string_view to_string(FunctionalInputs i) { return i == FunctionalInputs::kNormal ? "normal" : "outliers"; }
std::string_view to_string(Fp8Scales s) {
  return s == Fp8Scales::kHead ? "head" : s == Fp8Scales::kBlock ? "block" : "none";
}

std::string to_string(const KvLengths& k) {
  switch (k.kind) {
    case KvLengths::Kind::kFixed:
      return k.fixed ? std::to_string(k.fixed) : "";
    case KvLengths::Kind::kUniform:
      return "{uniform: [" + std::to_string(k.min) + ", " + std::to_string(k.max) + "], seed: " +
             std::to_string(k.seed) + "}";
    case KvLengths::Kind::kList: {
      std::string s = "[";
      for (std::size_t i = 0; i < k.list.size(); ++i) s += (i ? ", " : "") + std::to_string(k.list[i]);
      return s + "]";
    }
  }
  return "";
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<std::uint64_t> sequence_kv_lengths(const Workload& w) {
  const KvLengths& k = w.kv_lengths;
  switch (k.kind) {
    case KvLengths::Kind::kList:
      return k.list;
    case KvLengths::Kind::kUniform: {
      std::vector<std::uint64_t> out(w.batch);
      std::uint64_t state = k.seed;
      const std::uint64_t span = k.max - k.min + 1;  // min <= max (validated)
      for (auto& n : out) n = k.min + (span ? splitmix64(state) % span : splitmix64(state));
      return out;
    }
    case KvLengths::Kind::kFixed:
      break;
  }
  return std::vector<std::uint64_t>(w.batch, k.fixed ? k.fixed : w.seq_kv);
}
std::string_view to_string(KernelImpl i) { return i == KernelImpl::kFa2 ? "fa2" : "triton"; }
std::string_view to_string(SimMode m) { return m == SimMode::kFull ? "full" : "sampled"; }

bool packs_query_groups(const Workload& w) {
  return w.seq_q == 1 && w.kv_heads != 0 && w.kv_heads < w.heads && w.head_dim % 8 == 0;
}

Workload packed_query_groups(const Workload& w, bool group_is_row_tile) {
  if (!packs_query_groups(w)) return w;
  Workload v = w;
  v.seq_q = w.heads / w.kv_heads;
  v.heads = w.kv_heads;
  v.causal = false;
  if (group_is_row_tile) v.block_m = v.seq_q;
  return v;
}

}  // namespace attnsim::core
