#include "sim/core/workload.h"

namespace attnsim::core {

const std::vector<std::string_view>& workload_keys() {
  static const std::vector<std::string_view> keys = {
      "kernel",     "batch",        "heads",           "kv_heads",     "seq",        "seq_q",
      "seq_kv",     "head_dim",     "dtype",           "causal",       "pass",       "block_m",
      "block_n",    "block_k",      "warps",           "stages",       "cta_order",  "regs_per_thread",
      "smem_per_cta", "num_splits", "sram_bytes",      "functional",   "seed",       "working_set_bytes",
      "loads",      "programs",     "bytes_per_step",  "total_bytes", "gemm_cluster",
      "stack_frame_bytes", "sim.mode"};
  return keys;
}

std::string_view to_string(Pass p) { return p == Pass::kFwd ? "fwd" : "fwdbwd"; }
std::string_view to_string(CtaOrder o) { return o == CtaOrder::kRowMajor ? "row-major" : "head-major"; }
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
