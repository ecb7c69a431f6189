// Sampled simulation across CTAs: per-wave statistics, the steady-state test, the reference
// CTA that skipped CTAs are counted as, and their shared tensors' DRAM reads per sharing group.
#include <algorithm>
#include <cmath>
#include <iterator>

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
  for (std::uint64_t p = 1; p <= kMaxPeriod && period == 0 && 2 * p <= w + 1 && w + 1 - 2 * p >= test_from_; ++p) {
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
  // From here on CTAs are skipped whole, each counted as the mean CTA of the last 2p waves, over a
  // whole number of periods in phase with those waves: a span of waves [skip, end) whose last wave
  // is simulated again to rebuild the L2 state (counted as the reference too). Where waves
  // alternate (p = 2: a head's CTAs read its K/V from DRAM in one wave and from the L2 in the
  // next) a span that began or ended mid-period would count one wave's DRAM reads as half of two.
  // CTAs dispatched before the test passed are simulated, so with p > 1 the span starts at the
  // first wave of the right phase not yet dispatched.
  steady_ = true;
  fit_group_costs(w, wave);
  ref_.shape = wave.shape;
  ref_.duration = dur / n;
  const double var = std::max(0.0, sq / n - ref_.duration * ref_.duration);
  // The waves' largest disagreement plus the standard error of the mean CTA time.
  ref_.rel_error = ref_.duration > 0 ? worst + std::sqrt(var / n) / ref_.duration : 0.0;
  ref_.stats = s.cta_stats;
  ref_.stats.events = 0;
  ref_.smem = s.cta_smem;
  auto phase_up = [&](std::uint64_t x) { return x + (period - (x - (w + 1)) % period) % period; };
  const std::uint64_t skip = period == 1 ? w + 1 : phase_up(std::max(w + 1, (dispatched_ + per - 1) / per));
  skip_from_ = skip * per;
  // The span ends where the tail begins (the last full and the partial wave are simulated), or,
  // where that leaves room, at kRemeasureFactor times the waves up to here: the launch is
  // measured again from there until steady again. Waves that agree one to the next can drift over
  // tens of waves: in the softmax of standard B1 H8 N16384 d128 on the h200 (496 waves of 264
  // CTAs) a full run's CTA time is 11,430 cycles at waves 9-20 and 11,600 from wave 40 on (the
  // HBM read latency rises from 706 to 745 cycles), and the one reference taken at wave 2 put the
  // launch 1.5 % fast. A re-measurement simulates at least 2p + 1 waves: it is made only where
  // kRemeasureSpan times that many waves follow it, and only for CTAs of fewer than kMinSteps steps
  // (not sampled inside). CTAs with long loops over shared data keep a lockstep in a full run (a
  // head's CTAs read each K/V block at nearly the same time) that one rebuilding wave after a
  // span of skipped CTAs does not restore: in flash2 B1 H32 N131072 d128 on the h200 the waves
  // measured again read 75 MB, then up to 460 MB each from DRAM instead of 71 MB, and were not
  // steady again (25x the CPU time).
  const std::uint64_t tail = tail_from_ / per;
  const std::uint64_t again = phase_up(std::max(skip, kRemeasureFactor * (w + 1)));
  remeasure_ = ref_.shape.steps < kMinSteps && again + kRemeasureSpan * (2 * period + 1) <= tail;
  const std::uint64_t end = remeasure_ ? again : (tail > skip ? tail - (tail - skip) % period : skip);
  end_from_ = end * per;
}

void Sampler::note_keys(std::uint64_t cta, const std::vector<core::TileOp>& ops, std::uint32_t& seen) {
  static_assert(core::kNumTensors <= 32, "seen is a bit per tensor");
  const std::uint64_t w = cta / slots_.size();
  if (w >= waves_.size()) return;
  Wave& wave = waves_[w];
  if (wave.keys.empty()) wave.keys.resize(core::kNumTensors);
  for (const core::TileOp& op : ops) {
    const auto t = static_cast<std::size_t>(op.tensor);
    if (op.kind != core::OpKind::kLoad || t >= core::kNumTensors || (seen >> t & 1u)) continue;
    seen |= 1u << t;
    wave.keys[t].push_back(op.addr);
  }
}

std::pair<double, double> Sampler::groups(std::uint64_t w, std::size_t t) const {
  auto unique_keys = [&](std::uint64_t x) {
    std::vector<core::Bytes> v;
    if (t < waves_[x].keys.size()) v = waves_[x].keys[t];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  const std::vector<core::Bytes> now = unique_keys(w);
  if (w == 0) return {static_cast<double>(now.size()), static_cast<double>(now.size())};
  const std::vector<core::Bytes> before = unique_keys(w - 1);
  std::vector<core::Bytes> fresh;
  std::set_difference(now.begin(), now.end(), before.begin(), before.end(), std::back_inserter(fresh));
  return {static_cast<double>(now.size()), static_cast<double>(fresh.size())};
}

void Sampler::fit_group_costs(std::uint64_t w, const Wave& wave) {
  // Where a tensor's sharing groups are larger than two CTAs on average and the reference waves
  // read it through the L2 (L2 bytes at least twice its DRAM reads), a wave's DRAM reads of it
  // are fitted as fresh * F + continuing * C over the complete, uniform waves simulated so far
  // (least squares): a group new to the wave reads its data from DRAM; one the wave before had
  // finds it in the L2 if it fit there (C near 0) or streams it again (C near F). The reference
  // waves alone lie inside one group where a group fills several waves and miss the waves that
  // start one: flash2 H8 N7936 d128 on an h200 cut to 8 SMs counted 50 % of the DRAM reads.
  // Where fresh and continuing groups do not vary apart, F = C = reads per group.
  const std::uint64_t per = slots_.size();
  group_cost_.assign(core::kNumTensors, GroupCost{});
  for (std::size_t t = 0; t < core::kNumTensors; ++t) {
    const double lts = ref_.mem[10 + 2 * core::kNumTensors + 2 * t], dram = ref_.mem[10 + 2 * t];
    if (!(lts > 0 && lts >= 2 * dram)) continue;
    double nn = 0, nc = 0, cc = 0, nd = 0, cd = 0, gg = 0, gd = 0, gsum = 0, used = 0;
    for (std::uint64_t x = 0; x <= w; ++x) {
      const Wave& y = waves_[x];
      if (y.done != per || !y.uniform || !(y.shape == wave.shape)) continue;
      const auto [g, n] = groups(x, t);
      const double c = g - n, d = y.mem[10 + 2 * t];
      nn += n * n, nc += n * c, cc += c * c, nd += n * d, cd += c * d, gg += g * g, gd += g * d, gsum += g;
      used += 1;
    }
    if (used == 0 || gg <= 0 || 2 * gsum / used > static_cast<double>(per)) continue;
    GroupCost& cost = group_cost_[t];
    cost.on = true;
    cost.fresh = cost.cont = gd / gg;
    const double det = nn * cc - nc * nc;
    if (nn > 0 && cc > 0 && det > 1e-9 * nn * cc) {
      const double f = (nd * cc - cd * nc) / det, c = (cd * nn - nd * nc) / det;
      if (f >= 0 && c >= 0) cost.fresh = f, cost.cont = c;
    } else if (nn > 0 && cc <= 0) {
      cost.fresh = cost.cont = nd / nn;
    } else if (cc > 0 && nn <= 0) {
      cost.fresh = cost.cont = cd / cc;
    }
  }
  ref_.counted = ref_.mem;
  for (std::size_t t = 0; t < core::kNumTensors; ++t)
    if (group_cost_[t].on) ref_.counted[10 + 2 * t] = 0;
}

bool Sampler::waves_could_be_skipped(std::uint64_t ctas,
                                     const std::function<std::uint64_t(std::uint64_t)>& count_steps) const {
  // wave_done finds a launch steady only on 2p complete waves of CTAs of one shape (p >= 1), so
  // at least two consecutive full waves w - 1, w of equal step counts, and CTAs are skipped (or
  // rebuilt) only from wave w + 1 up to the tail (the last full wave): w + 3 <= the full waves.
  // A causal launch has no such waves (each holds query blocks of different lengths), nor has a
  // launch of three waves or fewer: they would pay the hooks for nothing.
  const std::uint64_t per = slots_.size();
  constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t prev = kNone;  // the step count of the previous wave where it was uniform
  for (std::uint64_t w = 0; per > 0 && (w + 3) * per <= ctas; ++w) {
    std::uint64_t count = kNone;
    for (std::uint64_t cta = w * per; cta < (w + 1) * per; ++cta) {
      const std::uint64_t steps = count_steps(cta);
      if (count == kNone) count = steps;
      if (steps != count) {
        count = kNone;
        break;
      }
    }
    if (count != kNone && count == prev) return true;
    prev = count;
  }
  return false;
}

Sampler::CtaRole Sampler::role_of(std::uint64_t cta) {
  dispatched_ = cta + 1;
  if (!steady_ || !skip_waves_ || cta < skip_from_) return CtaRole::kSimulated;
  if (cta < end_from_) return cta + slots_.size() >= end_from_ ? CtaRole::kRebuild : CtaRole::kSkipped;
  if (remeasure_) {  // simulated from here until the waves are steady again
    steady_ = remeasure_ = false;
    test_from_ = end_from_ / slots_.size();
  }
  return CtaRole::kSimulated;
}

}  // namespace attnsim::engine
