// Metrics derived from a launch's (or a run's) counters and the device's peaks: attained TFLOP/s
// and DRAM GB/s with their % of peak, each resource's busy % and the resource that bounds the
// kernel (attnsim__bound). Pure arithmetic on Metrics; docs/metrics-derived.md states each formula.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"

namespace attnsim::core {

// A resource counts as the bound when it was busy at least this share of the elapsed time
// (summed over its instances): Nsight Compute's Speed-of-Light rule (SOLBottleneck) reads
// throughput below 60 % of peak as latency-bound (docs/metrics-derived.md).
inline constexpr double kBoundThresholdPct = 60.0;

// The resources attnsim__bound chooses among, in tie order, each with its busy-% metric.
struct BoundResource {
  std::string_view name;    // "dram", "l2", "smem", "tensor", "issue"
  std::string_view metric;  // e.g. "attnsim__dram_busy_pct"
};
inline constexpr std::array<BoundResource, 5> kBoundResources = {{{"dram", "attnsim__dram_busy_pct"},
                                                                  {"l2", "attnsim__l2_busy_pct"},
                                                                  {"smem", "attnsim__smem_busy_pct"},
                                                                  {"tensor", "attnsim__tensor_busy_pct"},
                                                                  {"issue", "attnsim__issue_busy_pct"}}};

// The device's peaks: tensor-core FLOP/s over all SMs at clock_ghz (TFLOP/s), and HBM GB/s.
double peak_tflops(const DeviceSpec& device);
double peak_dram_gbps(const DeviceSpec& device);

// Adds (or replaces) attnsim__tflops, attnsim__pct_peak_flops, attnsim__dram_gbps,
// attnsim__pct_peak_dram and the five busy-% metrics of kBoundResources, from
// gpu__time_duration.sum, attnsim__flops, dram__bytes_{read,write}.sum, attnsim__cycles and the
// engine's attnsim__*_busy_cycles counters (a missing counter counts as 0). Works on one
// launch's metrics and on a run's totals (sums over launches run back to back).
void add_derived_metrics(Metrics& m, const DeviceSpec& device);

// attnsim__bound: the resource of kBoundResources with the highest busy % if that is at least
// kBoundThresholdPct (the first in tie order), else "latency"; "" when `m` has no busy-% metrics.
std::string bound_of(const Metrics& m);

// The occupancy limit that binds from launch__occupancy_limit_* ("registers", "shared_mem",
// "warps", "blocks"; ties in that order, as compute_occupancy); "" when they are missing.
std::string occupancy_limiter_of(const Metrics& m);

}  // namespace attnsim::core
