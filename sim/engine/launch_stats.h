// Launch statistics: the engine's typed counters of one launch (LaunchStats, summed with +=) and
// LaunchTotals, everything a launch reports at its end (both plain data in core/launch_totals.h,
// handed over in core::KernelResult::totals; sim/io names them), and the time series sampled
// during the launch (SampleSeries). Leaves out per-warp stall reasons and instruction mixes.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/launch_totals.h"
#include "sim/core/run_result.h"
#include "sim/engine/memory_system.h"

namespace attnsim::engine {

using core::BusyCycles;
using core::LaunchStats;
using core::LaunchTotals;

// Samples of cumulative DRAM and L2 bytes and of resident warps, every period cycles. With an
// automatic period (the first 64 cycles) the period doubles and pairs of samples merge past
// kMaxSamples, so a launch of any length keeps between kMaxSamples / 2 and kMaxSamples.
class SampleSeries {
 public:
  static constexpr std::size_t kMaxSamples = 512;
  struct Sample {
    double t = 0;
    double dram_bytes = 0, lts_bytes = 0, warps_pct = 0;
  };
  // `period_cycles` <= 0: automatic.
  explicit SampleSeries(double period_cycles)
      : auto_period_(period_cycles <= 0), period_(auto_period_ ? 64.0 : period_cycles) {}
  double period() const { return period_; }
  const std::vector<Sample>& samples() const { return samples_; }
  void record(const Sample& x);
  // The series as rates: time_ns, dram_gbps, lts_gbps, active_warps_pct.
  core::TimeSeries to_rates(const core::DeviceSpec& device) const;

 private:
  bool auto_period_;
  double period_;
  std::vector<Sample> samples_;
};

}  // namespace attnsim::engine
