// Launch statistics: the engine's typed counters of one launch (LaunchStats, summed with +=),
// the time series sampled during it (SampleSeries), and LaunchTotals, everything a launch reports
// at its end; write_metrics gives those numbers their Nsight Compute (and attnsim__) names.
// Leaves out per-warp stall reasons and instruction mixes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/occupancy.h"
#include "sim/core/run_result.h"
#include "sim/core/tile_program.h"
#include "sim/engine/memory_system.h"

namespace attnsim::engine {

struct LaunchStats {
  std::uint64_t events = 0;
  double flops = 0;  // tensor core, SFU and FP32 work
  std::uint64_t wavefronts = 0, bank_conflicts = 0;  // shared memory
  // Units each SM pipe served, summed over SMs (busy cycles = units / rate): MMA FLOP, FP32 and
  // SFU ops, issued thread instructions, global bytes through the LSU.
  double mma_flops = 0, fp32_ops = 0, exp_ops = 0, issue_ops = 0;
  core::Bytes lsu_bytes = 0;

  LaunchStats& operator+=(const LaunchStats& o) {
    events += o.events;
    flops += o.flops;
    wavefronts += o.wavefronts;
    bank_conflicts += o.bank_conflicts;
    mma_flops += o.mma_flops;
    fp32_ops += o.fp32_ops;
    exp_ops += o.exp_ops;
    issue_ops += o.issue_ops;
    lsu_bytes += o.lsu_bytes;
    return *this;
  }
};

// Busy cycles of each resource up to the launch's end (before the final write-back, which does
// not extend the launch), summed over its instances: the inputs of attnsim__bound
// (core/derived_metrics.h). The SM pipes' busy cycles are the units they served over their rates.
struct BusyCycles {
  double dram = 0, l2 = 0, dma = 0, lsu = 0, smem = 0, tensor = 0, fp32 = 0, sfu = 0, issue = 0;
};

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

// Everything one launch reports at its end.
struct LaunchTotals {
  LaunchStats stats;
  double cycles = 0;
  double time_ns = 0;
  core::Bytes dram_read = 0, dram_write = 0;
  MemoryCounters memory;
  double warps_integral = 0, active_cycles = 0;  // summed over SMs
  double max_warps_per_sm = 1;
  core::OccupancyResult occupancy;
  BusyCycles busy;
  core::LaunchShape shape;
  std::uint64_t ctas = 0;
  double waves = 0;
  std::optional<double> cycles_per_load;  // kernels that time their blocking loads
};

// Appends the launch's metrics under their Nsight Compute / attnsim__ names.
void write_metrics(const LaunchTotals& t, core::Metrics& m);

}  // namespace attnsim::engine
