// The Sampler's per-step and per-CTA hooks: the member templates declared in sampler.h.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/sampler.h"

namespace attnsim::engine {

template <class Counts>
double Sampler::on_step(std::uint32_t slot, const std::vector<core::TileOp>& ops, double now, Counts&& counts) {
  Slot& s = slots_[slot];
  if (s.measure) {  // the previous step was simulated and counts as a sample of its run
    const double d = now - s.step_start;
    s.n += 1;
    s.sum += d;
    s.sumsq += d * d;
    if (s.run_pos >= kWarmSteps / 2 && s.run_pos < kWarmSteps) s.early[s.run_pos < kWarmSteps * 3 / 4 ? 0 : 1] += d;
  }
  const std::uint64_t sig = signature(ops);
  count_step(s, ops.size(), sig);
  if (!s.have_sig || sig != s.sig) {  // a new run
    s.have_sig = true;
    s.sig = sig;
    s.run_pos = 0;
    s.n = s.sum = s.sumsq = 0;
    s.pool = kNoPool;  // the run before keeps its contribution to its pool
    s.early[0] = s.early[1] = 0;
    s.warm_end = kWarmSteps;
    s.step_counted = false;
    s.x_based = false;
  } else {
    ++s.run_pos;
  }
  if (skip_steps_ && s.run_pos == kWarmSteps) s.warm_end = decide_warm_end(s);
  if (s.warm_end > kWarmSteps && s.run_pos == s.warm_end - kSampleSteps) s.n = s.sum = s.sumsq = 0;  // samples: the last 8
  if (long_launch_ && !s.x_based && s.run_pos == kExtrapolateAfter / 2) {  // extrapolated runs: counts from here
    own_counts(s, s.x_base);
    s.x_pos = s.run_pos;
    s.x_based = true;
  }
  // The same steps of every CTA's run are simulated (a schedule by run position alone), so
  // that CTAs sharing data (the K/V blocks of a head) touch the same blocks in the simulated
  // steps and their L2 hit ratios carry over to the skipped ones.
  const bool simulate = !skip_steps_ || s.run_pos < s.warm_end || s.n < 1 || (s.run_pos - kWarmSteps) % kPeriod >= kPeriod - kBlockSteps;
  if (!simulate) {
    if (!s.step_counted) {
      s.step_stats = {};
      s.step_smem = {};
      for (const core::TileOp& op : ops) counts(op, s.step_stats, s.step_smem);
      s.step_counted = true;
    }
    skipped_stats_ += s.step_stats;
    skipped_smem_ += s.step_smem;
    s.cta_stats += s.step_stats;
    s.cta_smem += s.step_smem;
    ops_skipped_ += ops.size();
    {
      const auto [mean, standard_error] = skipped_step_time(s);
      add_skipped(s, mean, standard_error);
    }
    s.measure = false;
    s.since_skip = 0;
    skipped_steps_ = true;
    return -1;
  }
  for (const core::TileOp& op : ops) counts(op, s.cta_stats, s.cta_smem);
  const double start = now + s.pending;
  s.pending = 0;
  s.last_span = 0;
  s.step_start = start;
  s.measure = s.run_pos >= kWarmSteps / 2 && s.since_skip >= kLeadSteps;  // past the ramp-up
  ++s.since_skip;
  return start;
}


template <class Emit, class Counts>
void Sampler::describe_cta(std::uint32_t slot, std::uint32_t groups, Emit&& emit, Counts&& counts) {
  Slot& s = slots_[slot];
  for (std::uint32_t g = 0; g < groups; ++g)
    for (std::uint64_t step = 0;; ++step) {
      check_ops_.clear();
      if (!emit(g, step, check_ops_)) break;
      s.shape.ops += check_ops_.size();
      ops_simulated_ += check_ops_.size();  // a group resumed past a barrier op does not note it
      for (const core::TileOp& op : check_ops_) counts(op, s.cta_stats, s.cta_smem);
      if (g != 0) continue;
      const std::uint64_t sig = signature(check_ops_);
      if (s.shape.steps++ == 0) s.shape.first_sig = sig;
      s.shape.last_sig = sig;
    }
}

template <class Emit>
bool Sampler::equal_cta(Emit& emit, const Reference& ref) {
  const CtaShape& r = ref.shape;
  if (r.steps == 0) return false;
  std::uint64_t sig = 0;
  auto step_sig = [&](std::uint64_t step) {  // false: the CTA has no such step
    if (step < peeked_) return sig = peek_sig_[step], true;
    if (step == peeked_ && peek_end_) return false;
    check_ops_.clear();
    if (!emit(step, check_ops_)) return false;
    sig = signature(check_ops_);
    return true;
  };
  if (!step_sig(0) || sig != r.first_sig) return false;
  if (!step_sig(r.steps - 1) || sig != r.last_sig) return false;
  return !step_sig(r.steps);
}

template <class Emit>
bool Sampler::fast_forward(std::uint32_t slot, Emit&& emit) {
  Slot& s = slots_[slot];
  if (!s.ff_pending) return s.ff;
  s.ff_pending = false;
  peeked_ = 0, peek_end_ = false;
  s.ff = s.warm = equal_cta(emit, ref(s.cta));  // counted as the reference CTA
  if (s.ff) ++fast_forwarded_;
  return s.ff;
}

template <class Emit>
double Sampler::start_cta(std::uint32_t slot, std::uint64_t cta, double now, Emit&& emit, bool beside_earlier) {
  Slot& s = slots_[slot];
  reset(s, cta, now);
  std::uint32_t seen = 0;
  peeked_ = 0, peek_end_ = false;
  for (std::uint64_t step = 0; skip_waves_ && step < 2; ++step, ++peeked_) {
    check_ops_.clear();
    if (!emit(step, check_ops_)) {
      peek_end_ = true;
      break;
    }
    note_keys(cta, check_ops_, seen);
    peek_sig_[step] = signature(check_ops_);
  }
  switch (role_of(cta)) {
    case CtaRole::kSimulated:
      s.ff_pending = fast_forward_on_ && to_end_ && steady_ && cta >= ff_from_;
      return 0;
    case CtaRole::kRebuild:  // simulated to rebuild the L2 state; counted as the reference CTA if equal
      s.warm = equal_cta(emit, ref(cta));
      return 0;
    case CtaRole::kSkipped:
      if (beside_earlier && classes_ > 1) {  // simulated beside a CTA from before the span
        s.warm = equal_cta(emit, ref(cta));
        return 0;
      }
      break;
  }
  if (!equal_cta(emit, ref(cta))) return 0;
  s.phantom = true;
  return ref(cta).duration;
}

}  // namespace attnsim::engine
