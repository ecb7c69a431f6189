// Sampled simulation across CTAs: per-wave statistics, the steady-state test and the reference
// CTA that skipped CTAs are counted as.
#include <cmath>

#include "sim/engine/sampler.h"

namespace attnsim::engine {

namespace {

double rel_diff(double a, double b) {
  const double m = std::max(std::fabs(a), std::fabs(b));
  return m > 0 ? std::fabs(a - b) / m : 0.0;
}

}  // namespace

void Sampler::wave_done(std::uint64_t cta, const Slot& s, double duration, const std::vector<double>& mem) {
  const std::uint64_t per = slots_.size();
  const std::uint64_t w = cta / per;
  if (w >= waves_.size()) return;
  Wave& wave = waves_[w];
  if (wave.done == 0) {
    wave.shape = s.shape;
    wave.mem.assign(kVec, 0.0);
  } else if (!(s.shape == wave.shape)) {
    wave.uniform = false;
  }
  ++wave.done;
  wave.dur_sum += duration;
  wave.dur_sq += duration * duration;
  for (std::size_t i = 0; i < kVec; ++i) wave.mem[i] += mem[i];
  if (steady_ || wave.done != per || w == 0) return;
  // Wave w is complete: steady when it and wave w - 1 are complete, uniform, equal in shape,
  // and agree in mean CTA time, DRAM bytes and L2 hit sectors within kWaveTolerance.
  const Wave& prev = waves_[w - 1];
  if (prev.done != per || !prev.uniform || !wave.uniform || !(prev.shape == wave.shape))
    return;
  auto dram = [](const Wave& x) {
    double b = 0;
    for (std::size_t i = 10; i < 10 + 2 * core::kNumTensors; ++i) b += x.mem[i];
    return b;
  };
  const double n = static_cast<double>(per);
  const double t0 = prev.dur_sum / n, t1 = wave.dur_sum / n;
  const double dt = rel_diff(t0, t1);
  if (dt > kWaveTolerance || rel_diff(dram(prev), dram(wave)) > kWaveTolerance ||
      rel_diff(prev.mem[1], wave.mem[1]) > kWaveTolerance || rel_diff(prev.mem[2], wave.mem[2]) > kWaveTolerance)
    return;
  // The CTAs not dispatched yet before the warm-up wave are skipped from here on.
  steady_ = true;
  ref_.shape = wave.shape;
  ref_.duration = 0.5 * (t0 + t1);
  const double var = std::max(0.0, (prev.dur_sq + wave.dur_sq) / (2 * n) - ref_.duration * ref_.duration);
  // The waves' disagreement plus the standard error of the mean CTA time.
  ref_.rel_error = ref_.duration > 0 ? dt + std::sqrt(var / (2 * n)) / ref_.duration : 0.0;
  ref_.mem.assign(kVec, 0.0);
  for (std::size_t i = 0; i < kVec; ++i) ref_.mem[i] = (prev.mem[i] + wave.mem[i]) / (2 * n);
  ref_.stats = s.cta_stats;
  ref_.stats.events = 0;
  ref_.smem = s.cta_smem;
  skip_from_ = (w + 1) * per;
}

}  // namespace attnsim::engine
