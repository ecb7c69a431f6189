#include "sim/core/derived_metrics.h"

#include <algorithm>

namespace attnsim::core {

namespace {

double value(const Metrics& m, std::string_view name) {
  const Metric* x = find_metric(m, name);
  return x ? x->value : 0.0;
}

// 100 * busy / (instances * cycles), or 0 when there is no elapsed time.
double busy_pct(double busy, double instances, double cycles) {
  return instances > 0 && cycles > 0 ? 100.0 * busy / (instances * cycles) : 0.0;
}

}  // namespace

double peak_tflops(const DeviceSpec& device) {
  const double clock = device.sm.tensor_clock_ghz > 0 ? device.sm.tensor_clock_ghz : device.clock_ghz;
  return device.sm.tensor_flops_per_cycle * device.sm.count * clock / 1e3;
}

double peak_dram_gbps(const DeviceSpec& device) { return device.hbm.bandwidth_gbps; }

void add_derived_metrics(Metrics& m, const DeviceSpec& device) {
  const double time_ns = value(m, "gpu__time_duration.sum");
  const double dram_bytes = value(m, "dram__bytes_read.sum") + value(m, "dram__bytes_write.sum");
  // FLOP per ns = GFLOP/s; bytes per ns = GB/s.
  const double tflops = time_ns > 0 ? value(m, "attnsim__flops") / time_ns / 1e3 : 0.0;
  const double gbps = time_ns > 0 ? dram_bytes / time_ns : 0.0;
  const double peak_flops = peak_tflops(device), peak_gbps = peak_dram_gbps(device);
  set_metric(m, "attnsim__tflops", tflops);
  set_metric(m, "attnsim__pct_peak_flops", peak_flops > 0 ? 100.0 * tflops / peak_flops : 0.0);
  set_metric(m, "attnsim__dram_gbps", gbps);
  set_metric(m, "attnsim__pct_peak_dram", peak_gbps > 0 ? 100.0 * gbps / peak_gbps : 0.0);

  const double cycles = value(m, "attnsim__cycles");
  const double sms = device.sm.count;
  const double channels = std::max<std::uint32_t>(1, device.hbm.channels);
  const double partitions = std::max<std::uint32_t>(1, device.l2.partitions);
  const double dma_engines = device.kind == DeviceKind::kScratchpad
                                 ? static_cast<double>(device.sm.count) * device.scratchpad.dma_engines
                                 : 0.0;
  auto busy = [&](std::string_view counter, double instances) {
    return busy_pct(value(m, counter), instances, cycles);
  };
  // dram: the HBM channels, and on scratchpad devices the DMA engines that feed them.
  set_metric(m, "attnsim__dram_busy_pct",
             std::max(busy("attnsim__dram_busy_cycles", channels), busy("attnsim__dma_busy_cycles", dma_engines)));
  set_metric(m, "attnsim__l2_busy_pct", busy("attnsim__l2_busy_cycles", partitions));
  // smem: the SM's L1/shared-memory data path: shared-memory wavefronts and the LSU's global bytes.
  set_metric(m, "attnsim__smem_busy_pct",
             std::max(busy("attnsim__smem_busy_cycles", sms), busy("attnsim__lsu_busy_cycles", sms)));
  set_metric(m, "attnsim__tensor_busy_pct", busy("attnsim__tensor_busy_cycles", sms));
  // issue: the non-tensor instruction pipes: issue slots, FP32 and the SFU (exponentials).
  set_metric(m, "attnsim__issue_busy_pct",
             std::max({busy("attnsim__issue_busy_cycles", sms), busy("attnsim__fp32_busy_cycles", sms),
                       busy("attnsim__sfu_busy_cycles", sms)}));
}

std::string bound_of(const Metrics& m) {
  const BoundResource* best = nullptr;
  double best_pct = 0;
  for (const BoundResource& r : kBoundResources) {
    const Metric* x = find_metric(m, r.metric);
    if (!x) continue;
    if (!best || x->value > best_pct) {
      best = &r;
      best_pct = x->value;
    }
  }
  if (!best) return "";
  return std::string(best_pct >= kBoundThresholdPct ? best->name : "latency");
}

std::string occupancy_limiter_of(const Metrics& m) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kLimits = {
      {{"launch__occupancy_limit_registers", "registers"},
       {"launch__occupancy_limit_shared_mem", "shared_mem"},
       {"launch__occupancy_limit_warps", "warps"},
       {"launch__occupancy_limit_blocks", "blocks"}}};
  std::string_view limiter;
  double lowest = 0;
  for (const auto& [metric, name] : kLimits) {
    const Metric* x = find_metric(m, metric);
    if (!x) return "";
    if (limiter.empty() || x->value < lowest) {
      limiter = name;
      lowest = x->value;
    }
  }
  return std::string(limiter);
}

}  // namespace attnsim::core
