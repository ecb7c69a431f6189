// The time series of a launch.
#include "sim/engine/launch_stats.h"

namespace attnsim::engine {

void SampleSeries::record(const Sample& x) {
  samples_.push_back(x);
  if (auto_period_ && samples_.size() > kMaxSamples) {
    std::vector<Sample> merged;
    merged.reserve(samples_.size() / 2 + 1);
    for (std::size_t i = 1; i < samples_.size(); i += 2) {
      Sample m = samples_[i];
      m.warps_pct = 0.5 * (samples_[i - 1].warps_pct + samples_[i].warps_pct);
      merged.push_back(m);
    }
    samples_.swap(merged);
    period_ *= 2;
  }
}

core::TimeSeries SampleSeries::to_rates(const core::DeviceSpec& device) const {
  const double clock = device.clock_ghz;
  core::TimeSeries s;
  s.period_ns = device.cycles_to_ns(period_);
  s.names = {"time_ns", "dram_gbps", "lts_gbps", "active_warps_pct"};
  s.columns.assign(4, {});
  double prev_t = 0, prev_dram = 0, prev_lts = 0;
  for (const Sample& x : samples_) {
    const double dt = x.t - prev_t;
    s.columns[0].push_back(device.cycles_to_ns(x.t));
    s.columns[1].push_back(dt > 0 ? (x.dram_bytes - prev_dram) / dt * clock : 0);
    s.columns[2].push_back(dt > 0 ? (x.lts_bytes - prev_lts) / dt * clock : 0);
    s.columns[3].push_back(x.warps_pct);
    prev_t = x.t;
    prev_dram = x.dram_bytes;
    prev_lts = x.lts_bytes;
  }
  return s;
}

}  // namespace attnsim::engine
