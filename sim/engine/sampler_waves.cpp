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
  // Steady when, for a period p of 1 to kMaxPeriod waves, the last 2p waves are
  // complete, uniform and equal in shape, and each of the last p agrees with the wave p before
  // it in mean CTA time, DRAM bytes, L2 hit sectors and L2 bytes within kWaveTolerance. Period
  // 2: CTAs that share data (a head's K/V blocks) in groups of about two waves make waves that
  // alternate between reading new data and re-reading it (flash2 B1 H32 N65536 on the h200:
  // DRAM bytes 40 % apart wave to wave, never steady with period 1, all CTAs simulated).
  auto dram = [](const Wave& x) { return dram_bytes(x.mem, 2); };
  auto agree = [&](const Wave& a, const Wave& b, double& dt) {
    dt = rel_diff(a.dur_sum, b.dur_sum);
    return dt <= kWaveTolerance && rel_diff(dram(a), dram(b)) <= kWaveTolerance &&
           rel_diff(a.mem[1], b.mem[1]) <= kWaveTolerance && rel_diff(a.mem[2], b.mem[2]) <= kWaveTolerance;
  };
  std::uint64_t period = 0;
  double worst = 0;
  for (std::uint64_t p = 1; p <= kMaxPeriod && period == 0 && 2 * p <= w + 1; ++p) {
    bool ok = true;
    worst = 0;
    for (std::uint64_t i = 0; i < 2 * p && ok; ++i) {
      const Wave& x = waves_[w - i];
      ok = x.done == per && x.uniform && x.shape == wave.shape;
    }
    for (std::uint64_t i = 0; i < p && ok; ++i) {
      double dt = 0;
      ok = agree(waves_[w - i - p], waves_[w - i], dt);
      worst = std::max(worst, dt);
    }
    if (ok) period = p;
  }
  if (period == 0) return;
  const double n = static_cast<double>(per * 2 * period);
  double dur = 0, sq = 0;
  ref_.mem.assign(kVec, 0.0);
  for (std::uint64_t i = 0; i < 2 * period; ++i) {
    const Wave& x = waves_[w - i];
    dur += x.dur_sum;
    sq += x.dur_sq;
    for (std::size_t k = 0; k < kVec; ++k) ref_.mem[k] += x.mem[k] / n;
  }
  // The CTAs not dispatched yet before the warm-up wave are skipped from here on, each counted
  // as the mean CTA of the last 2p waves.
  steady_ = true;
  ref_.shape = wave.shape;
  ref_.duration = dur / n;
  const double var = std::max(0.0, sq / n - ref_.duration * ref_.duration);
  // The waves' largest disagreement plus the standard error of the mean CTA time.
  ref_.rel_error = ref_.duration > 0 ? worst + std::sqrt(var / n) / ref_.duration : 0.0;
  ref_.stats = s.cta_stats;
  ref_.stats.events = 0;
  ref_.smem = s.cta_smem;
  skip_from_ = (w + 1) * per;
}

}  // namespace attnsim::engine
