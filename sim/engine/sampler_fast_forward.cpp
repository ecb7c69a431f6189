// Sampled simulation: steps skipped unwarmed, by CTAs that fast-forward beside a span to the
// launch's end (counted as the reference CTA) and by CTAs that extrapolate the middle of a long
// run in launches of many waves (docs/sampling.md, "Inside a CTA" and "Across CTAs").
#include <algorithm>
#include <cmath>

#include "sim/engine/sampler.h"

namespace attnsim::engine {

bool Sampler::stores(const std::vector<core::TileOp>& ops) {
  return std::any_of(ops.begin(), ops.end(), [](const core::TileOp& op) { return op.kind == core::OpKind::kStore; });
}

bool Sampler::skip_unwarmed(std::uint32_t slot, const std::vector<core::TileOp>& ops) {
  Slot& s = slots_[slot];
  if (!s.step_counted || signature(ops) != s.sig || stores(ops)) return false;
  skip_unwarmed_like_last(slot, ops.size());
  return true;
}

void Sampler::skip_unwarmed_like_last(std::uint32_t slot, std::size_t n_ops) {
  Slot& s = slots_[slot];
  count_step(s, n_ops, s.sig);
  ++s.run_pos;
  skipped_stats_ += s.step_stats;
  skipped_smem_ += s.step_smem;
  s.cta_stats += s.step_stats;
  s.cta_smem += s.step_smem;
  ops_skipped_ += n_ops;
  auto [mean, standard_error] = skipped_step_time(s);
  // An extrapolated stretch takes the pool's mean step time, the same for every CTA of the pool,
  // so that CTAs that read shared data in step keep doing so after it.
  if (!s.x_extra.empty() && s.pool != kNoPool && pools_[s.pool].ctas > 0) mean = pools_[s.pool].sum / pools_[s.pool].ctas;
  add_skipped(s, mean, standard_error);
}

void Sampler::own_counts(const Slot& s, std::vector<double>& v) const {
  v.assign(kVec, 0.0);
  for (const KeyAcc& a : s.keys) add_scaled(v, a.delta, 1.0);
  for (std::size_t i = 0; i < s.x_extra.size(); ++i) v[i] += s.x_extra[i];
}

std::uint64_t Sampler::extrapolate_until(std::uint32_t slot, std::uint64_t next_step) {
  Slot& s = slots_[slot];
  if (!fast_forward_on_ || !long_launch_ || l2_bytes_ <= 0 || s.ff || s.warm || s.phantom || !s.x_based || s.x_done ||
      s.run_pos < kExtrapolateAfter)
    return 0;
  // The run's counts per step since x_pos (this step's accesses included).
  own_counts(s, s.x_rate);
  const double steps = static_cast<double>(s.run_pos + 1 - s.x_pos);
  for (std::size_t i = 0; i < kVec; ++i) s.x_rate[i] = (s.x_rate[i] - s.x_base[i]) / steps;
  if (x_until_ == 0) {
    // Decided once for the launch, from the first CTA that gets here: every CTA extrapolates the
    // same steps, so that CTAs that read shared data in step keep doing so. The bytes the
    // launch's CTAs bring into the L2 per step (their DRAM reads): the last steps are warmed until
    // they have brought in kTailCover L2s, so that the L2 holds what warming them all would leave.
    // The mean over the CTAs under way that have counts since their x_pos (one CTA of a head's
    // lockstep group reads each block from DRAM, the others find it in the L2).
    double sum = 0, n = 0;
    for (const Slot& x : slots_) {
      if (x.phantom || x.warm || !x.x_based || x.run_pos <= x.x_pos) continue;
      own_counts(x, scratch_);
      double d = 0;
      for (std::size_t k = 0; k < core::kNumTensors; ++k) d += scratch_[10 + 2 * k] - x.x_base[10 + 2 * k];
      sum += d / static_cast<double>(x.run_pos - x.x_pos);
      n += 1;
    }
    const double fill = n > 0 ? sum / n * static_cast<double>(slots_.size()) : 0;
    if (fill <= 0) return 0;
    // Only where those reads ask for a small share of the HBM rate: the steps extrapolated load
    // no bandwidth (a DRAM-bound stream would run fast beside them).
    const double step = skipped_step_time(s).first;
    if (step <= 0 || fill / step > kMaxDramShare * dram_rate_) {
      x_until_ = 1;  // decided: none
      return 0;
    }
    const double tail = std::ceil(kTailCover * l2_bytes_ / fill);
    x_from_ = next_step;
    x_until_ = tail < static_cast<double>(cta_steps_) ? cta_steps_ - static_cast<std::uint64_t>(tail) : 1;
  }
  if (next_step < x_from_ || next_step + kPeriod > x_until_) return 0;
  s.x_done = true;
  s.x_extra.assign(kVec, 0.0);  // the stretch begins
  ++extrapolated_;
  return x_until_;
}

void Sampler::extrapolate(std::uint32_t slot, std::uint64_t n) {
  Slot& s = slots_[slot];
  const double f = static_cast<double>(n);
  for (std::size_t i = 0; i < kVec; ++i) {
    s.x_extra[i] += f * s.x_rate[i];
    ext_[i] += f * s.x_rate[i];
  }
}

}  // namespace attnsim::engine
