// Sampled simulation across CTAs: per-wave statistics, the steady-state test, the reference
// CTA that skipped CTAs are counted as (one per class of CTAs where their lengths repeat with a
// period), and their shared tensors' DRAM reads per sharing group.
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
  const std::uint64_t per = wave_;
  const std::uint64_t w = cta / per;
  if (w >= waves_.size()) return;
  Wave& wave = waves_[w];
  if (wave.done == 0) {
    wave.shape = s.shape;
    wave.mem.assign(kVec, 0.0);
  } else if (classes_ == 1 && !(s.shape == wave.shape)) {
    wave.uniform = false;
  }
  if (classes_ > 1) {  // a wave is uniform where each CTA has its class's shape
    Reference& c = class_seen_[cta % classes_];
    if (c.shape.steps == 0) c.shape = s.shape;
    if (!(s.shape == c.shape)) wave.uniform = false;
    c.stats = s.cta_stats;
    c.smem = s.cta_smem;
    const std::uint64_t row = (w % kRing) * per + cta % per;
    ring_wave_[row] = w;
    double* rec = &ring_[row * (kVec + 1)];
    rec[0] = duration;
    std::copy(mem.begin(), mem.end(), rec + 1);
  }
  wave.first_start = std::min(wave.first_start, s.cta_start);
  wave.last_end = std::max(wave.last_end, s.cta_start + duration);
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
  // With classes the reference waves start after the launch's first wave has retired: its CTAs
  // all start together at 0, and the CTAs dispatched while it retires (slots freed one by one, by
  // CTAs of different lengths) still run in that start (flash2 causal B4 H32 N4096 d128, h200,
  // one CTA per SM: mean CTA time 184.4 k, 185.7 k, 186.5 k cycles in waves 0-2, 186.4 k ...
  // 187.3 k over waves 3-24; waves 1 and 2 as the reference put the launch 0.4 % fast).
  std::uint64_t first = test_from_;
  if (classes_ > 1) {
    first = std::max<std::uint64_t>(first, 1);
    while (first <= w && waves_[first].first_start < waves_[0].last_end) ++first;
  }
  std::uint64_t period = 0;
  double worst = 0;
  for (std::uint64_t p = 1; p <= kMaxPeriod && period == 0 && 2 * p <= w + 1 && w + 1 - 2 * p >= first; ++p) {
    bool ok = true;
    worst = 0;
    for (std::uint64_t i = 0; i < 2 * p && ok; ++i) {
      const Wave& x = waves_[w - i];
      ok = x.done == per && x.uniform && (classes_ > 1 || x.shape == wave.shape);
    }
    for (std::uint64_t i = 0; i < p && ok; ++i) {
      double dt = 0;
      ok = agree(waves_[w - i - p], waves_[w - i], dt);
      worst = std::max(worst, dt);
    }
    if (ok) period = p;
  }
  if (period == 0 || (classes_ > 1 && !ring_holds(w, period))) return;
  const double n = static_cast<double>(per * 2 * period);
  double dur = 0, sq = 0;
  std::vector<double> mean(kVec, 0.0);
  for (std::uint64_t i = 0; i < 2 * period; ++i) {
    const Wave& x = waves_[w - i];
    dur += x.dur_sum;
    sq += x.dur_sq;
    for (std::size_t k = 0; k < kVec; ++k) mean[k] += x.mem[k] / n;
  }
  // From here on CTAs are skipped whole, each counted as the mean CTA of the last 2p waves (of its
  // class), over a whole number of periods in phase with those waves: a span of waves [skip, end)
  // whose last wave is simulated again to rebuild the L2 state (counted as the reference too).
  // Where waves alternate (p = 2: a head's CTAs read its K/V from DRAM in one wave and from the L2
  // in the next) a span that began or ended mid-period would count one wave's DRAM reads as half
  // of two. CTAs dispatched before the test passed are simulated, so the span starts at the first
  // wave of the right phase none of whose CTAs has been dispatched.
  std::uint64_t steps = wave.shape.steps;
  if (classes_ > 1) {
    steps = 0;
    for (const Reference& c : class_seen_) steps = std::max(steps, c.shape.steps);
  }
  auto phase_up = [&](std::uint64_t x) { return x + (period - (x - (w + 1)) % period) % period; };
  // A CTA skipped whole beside a simulated CTA of its wave leaves that one alone with the data
  // they share: on the teaching preset (two one-CTA SMs, a 64 KiB L2) the simulated CTA read its
  // head's K/V alone, the two slots fell out of step for good and every later wave read K/V twice
  // (DRAM +83 %). With classes, a wave's DRAM reads of a head's K/V also fall on whichever of its
  // CTAs reads a block first (the longest), so CTAs simulated beside CTAs counted as their class's
  // mean would count them twice (flash3 causal on an 8-SM h200: K and V +3 %).
  const std::uint64_t skip = phase_up(std::max(w + 1, (dispatched_ + per - 1) / per));
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
  const bool remeasure = steps < kMinSteps && again + kRemeasureSpan * (2 * period + 1) <= tail;
  // A long launch of long CTAs skips up to its end (kEndSpanWaves): its last full and partial
  // waves would simulate two or three waves of long CTAs (and one more to rebuild the L2 state
  // for them) to refine the end of a run of hundreds of waves.
  const std::uint64_t waves = waves_.size();
  const bool to_end = !remeasure && steps >= kMinSteps && waves >= kEndSpanWaves && waves > skip + 1;
  const std::uint64_t end = remeasure ? again
                            : to_end  ? waves
                                      : (tail > skip ? tail - (tail - skip) % period : skip);
  // A span of one wave would only rebuild: nothing is skipped, and the CTAs simulated keep their
  // own counts (the launch stays a full run).
  if (!remeasure && !to_end && end <= skip + 1) return;
  steady_ = true;
  remeasure_ = remeasure;
  to_end_ = to_end;
  skip_from_ = skip * per;
  ff_from_ = (w + 1) * per;
  // The CTAs running beyond the reference waves fast-forward from their next skipped step
  // (to_end: no CTA simulated after them needs the L2 state their warming would leave).
  if (to_end && skip_steps_ && fast_forward_on_)
    for (Slot& x : slots_) x.ff_pending = !x.phantom && !x.warm && x.cta >= ff_from_ && x.cta < skip_from_;
  end_from_ = end * per;
  Reference& all = refs_[0];  // the mean CTA of the 2p waves (all classes)
  all.mem = std::move(mean);
  fit_group_costs(w, wave);
  all.shape = wave.shape;
  all.duration = dur / n;
  const double var = std::max(0.0, sq / n - all.duration * all.duration);
  // The waves' largest disagreement plus the standard error of the mean CTA time.
  all.rel_error = all.duration > 0 ? worst + std::sqrt(var / n) / all.duration : 0.0;
  all.stats = s.cta_stats;
  all.stats.events = 0;
  all.smem = s.cta_smem;
  if (classes_ > 1) class_references(w, period, worst);
}

void Sampler::note_keys(std::uint64_t cta, const std::vector<core::TileOp>& ops, std::uint32_t& seen) {
  static_assert(core::kNumTensors <= 32, "seen is a bit per tensor");
  const std::uint64_t w = cta / wave_;
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
  const std::uint64_t per = wave_;
  const Reference& all = refs_[0];  // the mean CTA of the reference waves
  group_cost_.assign(core::kNumTensors, GroupCost{});
  for (std::size_t t = 0; t < core::kNumTensors; ++t) {
    const double lts = all.mem[10 + 2 * core::kNumTensors + 2 * t], dram = all.mem[10 + 2 * t];
    if (!(lts > 0 && lts >= 2 * dram)) continue;
    double nn = 0, nc = 0, cc = 0, nd = 0, cd = 0, gg = 0, gd = 0, gsum = 0, used = 0;
    for (std::uint64_t x = 0; x <= w; ++x) {
      const Wave& y = waves_[x];
      if (y.done != per || !y.uniform || (classes_ == 1 && !(y.shape == wave.shape))) continue;
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
  refs_[0].counted = all.mem;
  for (std::size_t t = 0; t < core::kNumTensors; ++t)
    if (group_cost_[t].on) refs_[0].counted[10 + 2 * t] = 0;
}

bool Sampler::ring_holds(std::uint64_t w, std::uint64_t p) const {
  for (std::uint64_t x = w + 1 - 2 * p; x <= w; ++x)
    for (std::uint64_t j = 0; j < wave_; ++j)
      if (ring_wave_[(x % kRing) * wave_ + j] != x) return false;
  return true;
}

void Sampler::class_references(std::uint64_t w, std::uint64_t p, double worst) {
  // A wave is whole periods, so the CTA at position j of any wave is of class j % classes_.
  const std::uint64_t per = wave_;
  std::vector<Reference> refs(classes_);
  std::vector<double> n(classes_, 0.0), sq(classes_, 0.0);
  for (Reference& r : refs) r.mem.assign(kVec, 0.0);
  for (std::uint64_t x = w + 1 - 2 * p; x <= w; ++x)
    for (std::uint64_t j = 0; j < per; ++j) {
      const double* rec = &ring_[((x % kRing) * per + j) * (kVec + 1)];
      const std::uint64_t k = j % classes_;
      Reference& r = refs[k];
      n[k] += 1;
      r.duration += rec[0];
      sq[k] += rec[0] * rec[0];
      for (std::size_t i = 0; i < kVec; ++i) r.mem[i] += rec[1 + i];
    }
  for (std::uint64_t k = 0; k < classes_; ++k) {
    Reference& r = refs[k];
    r.duration /= n[k];
    for (double& v : r.mem) v /= n[k];
    const double var = std::max(0.0, sq[k] / n[k] - r.duration * r.duration);
    // The waves' largest disagreement plus the standard error of the class's mean CTA time.
    r.rel_error = r.duration > 0 ? worst + std::sqrt(var / n[k]) / r.duration : 0.0;
    r.shape = class_seen_[k].shape;
    r.stats = class_seen_[k].stats;  // the op-stream counts: equal in every CTA of the class
    r.stats.events = 0;
    r.smem = class_seen_[k].smem;
    r.counted = r.mem;
    for (std::size_t t = 0; t < core::kNumTensors; ++t)
      if (group_cost_[t].on) r.counted[10 + 2 * t] = 0;
  }
  refs_ = std::move(refs);
}

bool Sampler::find_classes(std::uint64_t ctas, const std::function<std::uint64_t(std::uint64_t)>& count_steps,
                           const std::vector<std::uint64_t>& probe_ctas, const std::vector<std::uint64_t>& probe_steps) {
  // The step counts of the CTAs in dispatch order, counted as far as needed.
  std::vector<std::uint64_t> steps;
  auto at = [&](std::uint64_t c) {
    while (steps.size() <= c) steps.push_back(count_steps(steps.size()));
    return steps[c];
  };
  // Waves of at least the slots, kMinClassWaves of them: launches of fewer CTAs, or periods
  // longer than a twelfth of the launch, cannot be skipped by class (and counting their CTAs'
  // steps costs: 13 % of an inert flash_decode launch of 512 long CTAs of unequal lengths).
  const std::uint64_t slots = slots_.size();
  if (ctas < kMinClassWaves * slots) return false;
  for (std::uint64_t t = 2; 3 * t <= ctas && t <= kMaxClassWave && t * kMinClassWaves <= ctas; ++t) {
    bool ok = true;
    for (std::uint64_t c = t; c < 3 * t && ok; ++c) ok = at(c) == at(c - t);
    for (std::size_t i = 0; i < probe_ctas.size() && ok; ++i) ok = probe_steps[i] == at(probe_ctas[i] % t);
    if (!ok) continue;
    const std::uint64_t per = t * ((slots + t - 1) / t);
    if (per > kMaxClassWave || ctas / per < kMinClassWaves) return false;
    classes_ = t;
    set_wave(per);
    class_seen_.assign(t, Reference{});
    ring_.assign(kRing * per * (kVec + 1), 0.0);
    ring_wave_.assign(kRing * per, ~std::uint64_t{0});
    full_because_ = nullptr;
    return true;
  }
  return false;
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
  if (cta < end_from_) return !to_end_ && cta + wave_ >= end_from_ ? CtaRole::kRebuild : CtaRole::kSkipped;
  if (remeasure_) {  // simulated from here until the waves are steady again
    steady_ = remeasure_ = false;
    test_from_ = end_from_ / wave_;
  }
  return CtaRole::kSimulated;
}

}  // namespace attnsim::engine
