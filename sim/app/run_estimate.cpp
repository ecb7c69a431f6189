#include "sim/app/run_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

namespace attnsim::app {

namespace {

constexpr std::uint64_t kMaxProbedSteps = 1u << 16;
constexpr double kTagWayBytes = 16;          // bound on engine::SetAssocArray bytes per way (9; wide masks +16)
constexpr double kL1LineBytes = 128;
constexpr double kSlotBytes = 768;           // engine::CtaSlot without its ops
constexpr double kEventBytes = 32;           // engine::EventQueue entry
constexpr double kEventsPerSlot = 4;         // the queue's reservation per slot
constexpr double kFunctionalMatrices = 4;    // S, P and (fwdbwd) dP, dS of one pair
constexpr double kFunctionalVectors = 12;    // Q, K, V, O and gradients, reference and schedule

struct CtaCost {
  double ops = 0;
  double max_ops_per_step = 0;
};

CtaCost probe_cta(const core::KernelLaunch& launch, std::uint64_t cta) {
  CtaCost cost;
  std::vector<core::TileOp> ops;
  const std::uint32_t groups = static_cast<std::uint32_t>(launch.warp_groups().size());
  for (std::uint32_t g = 0; g < groups; ++g)
    for (std::uint64_t step = 0; step < kMaxProbedSteps; ++step) {
      ops.clear();
      if (!launch.emit_group_step(cta, g, step, ops)) break;
      cost.ops += static_cast<double>(ops.size());
      cost.max_ops_per_step = std::max(cost.max_ops_per_step, static_cast<double>(ops.size()));
    }
  return cost;
}

}  // namespace

std::string format_bytes(double bytes) {
  static constexpr std::array<const char*, 6> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  while (bytes >= 1024 && u + 1 < kUnits.size()) {
    bytes /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[u]);
  return buf;
}

std::string RunEstimate::describe() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "~%.3g events over %.3g CTAs", events, ctas);
  return "peak memory ~" + format_bytes(peak_memory_bytes()) + " (L2 tags " + format_bytes(l2_tag_bytes) +
         ", L1 tags " + format_bytes(l1_tag_bytes) + ", CTA slots and events " + format_bytes(slot_bytes) +
         ", functional mode " + format_bytes(functional_bytes) + "), " + buf;
}

RunEstimate estimate_run(const core::TileProgram& program, const core::DeviceSpec& device) {
  RunEstimate e;
  const double sms = device.sm.count;
  const double resident = std::max<double>(1, device.sm.max_blocks_per_sm);
  if (device.kind == core::DeviceKind::kGpu) {
    if (device.l2.line_bytes > 0)
      e.l2_tag_bytes = static_cast<double>(device.l2.capacity_bytes / device.l2.line_bytes) * kTagWayBytes;
    if (device.sm.l1_caches_global_loads)
      e.l1_tag_bytes = sms * static_cast<double>(device.sm.l1_shared_total_bytes) / kL1LineBytes * kTagWayBytes;
  }
  double max_slot_bytes = 0;
  for (const auto& launch : program.launches) {
    const double ctas = static_cast<double>(launch->shape().num_ctas());
    if (ctas <= 0) continue;
    CtaCost first = probe_cta(*launch, 0);
    CtaCost last = ctas > 1 ? probe_cta(*launch, launch->shape().num_ctas() - 1) : first;
    e.ctas += ctas;
    e.events += ctas * std::max(first.ops, last.ops);
    const double step_ops = std::max(first.max_ops_per_step, last.max_ops_per_step);
    max_slot_bytes = std::max(max_slot_bytes, kSlotBytes + step_ops * sizeof(core::TileOp));
  }
  e.slot_bytes = sms * resident * (max_slot_bytes + kEventsPerSlot * kEventBytes);
  const core::Workload& w = program.workload;
  for (const auto& launch : program.launches)  // completion times of the timed blocking loads
    e.slot_bytes += static_cast<double>(launch->shape().timed_loads) * sizeof(double);
  if (w.functional) {
    const double nq = static_cast<double>(w.seq_q), nkv = static_cast<double>(w.seq_kv);
    const double d = static_cast<double>(w.head_dim);
    e.functional_bytes = (kFunctionalMatrices * nq * nkv + kFunctionalVectors * (nq + nkv) * d) * sizeof(double);
  }
  return e;
}

core::Bytes default_max_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<core::Bytes>(pages) * static_cast<core::Bytes>(page_size) / 2;
}

}  // namespace attnsim::app
