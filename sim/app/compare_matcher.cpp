#include "sim/app/compare_matcher.h"
#include "kernels/registry.h"

#include <sstream>

namespace attnsim::app {

namespace {

bool truthy(const std::string& s) { return s == "true" || s == "True" || s == "1"; }

// Equal when both are known; a tile the simulated point leaves at 0 (kernel default) or a
// measurement that does not name it constrains nothing.
bool same_optional(const std::optional<std::uint64_t>& measured, const SimulatedPoint& p, const char* key) {
  if (!measured) return true;
  const auto sim = p.count(key);
  return !sim || *sim == 0 || *sim == *measured;
}

std::string describe(const io::MeasuredWorkload& w, const std::string& kernel) {
  std::ostringstream s;
  auto put = [&](const char* key, const std::optional<std::uint64_t>& v) {
    if (v) s << ' ' << key << '=' << *v;
  };
  s << "kernel=" << kernel;
  put("batch", w.batch);
  put("heads", w.heads);
  put("kv_heads", w.kv_heads ? w.kv_heads : w.heads);
  put("seq_q", w.seq_q);
  put("seq_kv", w.seq_kv);
  put("head_dim", w.head_dim);
  s << " causal=" << (w.causal.value_or(false) ? "true" : "false");
  put("block_m", w.block_m);
  put("block_n", w.block_n);
  put("warps", w.warps);
  put("stages", w.stages);
  if (!w.cta_order.empty()) s << " cta_order=" << w.cta_order;
  return s.str();
}

// A variant that names an implementation (kernels::KernelEntry::measured_impls, e.g. `triton`)
// matches only points of that `impl`; a point without the key has the default, fa2.
bool same_impl(const io::MeasuredWorkload& w, const std::string& kernel, const SimulatedPoint& p) {
  const kernels::KernelEntry* e = kernels::find_kernel(kernel);
  const std::string_view want = e && w.kernel.empty() ? kernels::measured_impl(*e, w.variant) : std::string_view{};
  if (want.empty()) return true;
  const std::string have = p.value("impl");
  return (have.empty() ? std::string_view("fa2") : std::string_view(have)) == want;
}

}  // namespace

std::vector<std::string> CompareMatcher::candidate_kernels(const io::MeasuredWorkload& w) {
  if (!w.kernel.empty()) return {w.kernel};
  for (const kernels::KernelEntry& e : kernels::kernel_registry())
    for (std::string_view name : e.measured_names)
      if (w.variant == name) {
        if (e.single_query_fallback && w.seq_q && *w.seq_q == 1) return {e.name, e.single_query_fallback};
        return {e.name};
      }
  return {};
}

bool CompareMatcher::same_workload(const io::MeasuredWorkload& w, const SimulatedPoint& p) {
  if (!w.has_shape()) return false;
  const std::uint64_t kv_heads = w.kv_heads ? *w.kv_heads : *w.heads;
  const auto sim_heads = p.count("heads");
  auto sim_kv_heads = p.count("kv_heads");
  if (!sim_kv_heads || *sim_kv_heads == 0) sim_kv_heads = sim_heads;
  if (p.count("batch") != w.batch || sim_heads != w.heads || sim_kv_heads != kv_heads ||
      p.count("seq_q") != w.seq_q || p.count("seq_kv") != w.seq_kv || p.count("head_dim") != w.head_dim)
    return false;
  if (truthy(p.value("causal")) != w.causal.value_or(false)) return false;
  if (!w.pass.empty() && !p.value("pass").empty() && p.value("pass") != w.pass) return false;
  if (!same_optional(w.block_m, p, "block_m") || !same_optional(w.block_n, p, "block_n") ||
      !same_optional(w.warps, p, "warps") || !same_optional(w.stages, p, "stages"))
    return false;
  if (!w.cta_order.empty() && !p.value("cta_order").empty() && p.value("cta_order") != w.cta_order)
    return false;
  return true;
}

MatchResult CompareMatcher::match(const io::MeasuredTable& measured, const std::vector<SimulatedPoint>& simulated,
                                  const std::string& device) {
  MatchResult result;
  for (std::size_t m = 0; m < measured.kernels.size(); ++m) {
    const io::MeasuredKernel& mk = measured.kernels[m];
    const io::MeasuredWorkload& w = mk.workload;
    if (!w.has_shape()) {
      result.unmatched.push_back({m, "no workload parameters (batch, heads, seq_q, seq_kv, head_dim); "
                                     "join them in as scripts/measure_cuda.sh does"});
      continue;
    }
    const std::vector<std::string> kernels = candidate_kernels(w);
    if (kernels.empty()) {
      result.unmatched.push_back({m, "unknown variant '" + w.variant +
                                         "' (known: std, sdpa_flash, triton, flash1, flash2, flash_decode; "
                                         "or give a `kernel` column)"});
      continue;
    }
    std::vector<std::size_t> found;
    std::string tried;
    for (const auto& kernel : kernels) {
      for (std::size_t p = 0; p < simulated.size(); ++p) {
        const SimulatedPoint& sp = simulated[p];
        if (sp.value("kernel") != kernel) continue;
        if (!device.empty() && sp.value("device") != device) continue;
        if (!same_impl(w, kernel, sp)) continue;
        if (same_workload(w, sp)) found.push_back(p);
      }
      tried += (tried.empty() ? "" : " or ") + describe(w, kernel);
      if (!found.empty()) break;
    }
    if (found.empty()) {
      result.unmatched.push_back({m, "no simulated point with " + tried});
      continue;
    }
    if (found.size() > 1) {
      std::string list;
      for (std::size_t p : found) list += (list.empty() ? "" : ", ") + std::to_string(simulated[p].index);
      result.unmatched.push_back({m, "ambiguous: simulated points " + list +
                                         " all match (name block_m/block_n/warps/stages/cta_order "
                                         "in the CSV, or pass --device)"});
      continue;
    }
    const SimulatedPoint& sp = simulated[found.front()];
    std::size_t k = 0;
    while (k < sp.kernels.size() && sp.kernels[k].index != mk.kernel_index) ++k;
    if (k == sp.kernels.size()) {
      result.unmatched.push_back({m, "simulated point " + std::to_string(sp.index) + " (" + sp.value("kernel") +
                                         ") launches " + std::to_string(sp.kernels.size()) +
                                         " kernel(s); none has index " + std::to_string(mk.kernel_index)});
      continue;
    }
    result.matches.push_back({m, found.front(), k});
  }
  return result;
}

}  // namespace attnsim::app
