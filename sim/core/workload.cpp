#include "sim/core/workload.h"

namespace attnsim::core {

std::string_view to_string(Pass p) { return p == Pass::kFwd ? "fwd" : "fwdbwd"; }
std::string_view to_string(CtaOrder o) { return o == CtaOrder::kRowMajor ? "row-major" : "head-major"; }

bool packs_query_groups(const Workload& w) {
  return (w.kernel == "flash2" || w.kernel == "flash_decode") && w.seq_q == 1 && w.kv_heads != 0 &&
         w.kv_heads < w.heads && w.head_dim % 8 == 0;
}

Workload packed_query_groups(const Workload& w) {
  if (!packs_query_groups(w)) return w;
  Workload v = w;
  v.seq_q = w.heads / w.kv_heads;
  v.heads = w.kv_heads;
  v.causal = false;
  if (w.kernel == "flash_decode") v.block_m = v.seq_q;
  return v;
}

}  // namespace attnsim::core
