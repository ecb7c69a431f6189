// Sampled simulation inside a CTA: run detection, skipped steps' counts, per-CTA memory counts.
#include "sim/engine/sampler.h"

#include <algorithm>
#include <cmath>

#include <array>

namespace attnsim::engine {

namespace {

// The memory counters in vec order (Sampler::kVec).
std::array<std::uint64_t, 10> counter_values(const core::MemoryCounters& c) {
  return {c.lts_sectors, c.lts_hit_sectors, c.lts_bytes, c.l2_request_bytes, c.l1_hits,
          c.l1_misses,   c.l2_near_hits,    c.l2_far_hits, c.l2_misses,     c.l2_writebacks};
}

}  // namespace

void count_op(const core::TileOp& op, SharedMemoryBanks& banks, core::LaunchStats& st, core::TensorTraffic& smem) {
  switch (op.kind) {
    case core::OpKind::kLoad:
    case core::OpKind::kStore:
      st.lsu_bytes += op.bytes();
      if (op.kind == core::OpKind::kLoad && op.async)  // into shared memory, of each receiving CTA
        st.fill_bytes += op.bytes() * static_cast<core::Bytes>(op.multicast ? __builtin_popcount(op.multicast) : 1);
      break;
    case core::OpKind::kSharedRead:
    case core::OpKind::kSharedWrite: {
      const BankCost c = banks.cost(op);
      st.wavefronts += c.wavefronts;
      st.bank_conflicts += c.conflicts;
      (op.kind == core::OpKind::kSharedRead ? smem[op.tensor].read : smem[op.tensor].write) += op.bytes();
      break;
    }
    case core::OpKind::kMma: {  // mma.sync, or async (wgmma): its FLOPs count when issued
      const double flops = 2.0 * op.m * op.n * op.k;
      st.flops += flops;
      st.mma_flops += flops;
      break;
    }
    case core::OpKind::kExp:
      st.flops += static_cast<double>(op.count);
      st.exp_ops += static_cast<double>(op.count);
      break;
    case core::OpKind::kElementwise:
      st.flops += static_cast<double>(op.count);
      st.fp32_ops += static_cast<double>(op.count);
      break;
    case core::OpKind::kIssue:
      st.issue_ops += static_cast<double>(op.count);
      break;
    // Ordering only: no pipe work, no bytes (as in the full engine).
    case core::OpKind::kBarrier:
    case core::OpKind::kCommit:
    case core::OpKind::kWait:
    case core::OpKind::kMbarArrive:
    case core::OpKind::kMbarWait:
    case core::OpKind::kMmaCommit:
    case core::OpKind::kMmaWait:
    case core::OpKind::kNamedSync:
    case core::OpKind::kNamedArrive:
      break;
  }
}

Sampler::Sampler(std::uint32_t slots, std::uint64_t ctas, bool flush_counted)
    : slots_(slots), flush_counted_(flush_counted), ext_(kVec, 0.0), scratch_(kVec, 0.0), ctas_(ctas) {
  set_wave(std::max<std::uint32_t>(1, slots));
}

void Sampler::set_wave(std::uint64_t per) {
  wave_ = per;
  waves_.assign((ctas_ + per - 1) / per, Wave{});
  // The last full wave and the partial one are simulated.
  const std::uint64_t rest = ctas_ % per;
  tail_from_ = ctas_ >= per + rest ? ctas_ - per - rest : 0;
}

std::uint64_t Sampler::signature(const std::vector<core::TileOp>& ops) {
  std::uint64_t h = 1469598103934665603ull ^ ops.size();
  auto mix = [&h](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const core::TileOp& op : ops) {
    mix(static_cast<std::uint64_t>(op.kind) | static_cast<std::uint64_t>(op.tensor) << 8 |
        static_cast<std::uint64_t>(op.pattern) << 16 | static_cast<std::uint64_t>(op.async) << 24 |
        static_cast<std::uint64_t>(op.bulk) << 25 | static_cast<std::uint64_t>(op.flavour) << 26 |
        static_cast<std::uint64_t>(op.barrier) << 32 | static_cast<std::uint64_t>(op.multicast) << 40);
    mix(static_cast<std::uint64_t>(op.rows) << 32 | op.row_bytes);
    mix(op.row_stride);
    mix(static_cast<std::uint64_t>(op.m) << 40 ^ static_cast<std::uint64_t>(op.n) << 20 ^ op.k);
    mix(op.count ^ static_cast<std::uint64_t>(op.tx_bytes) << 48);
  }
  return h;
}

void Sampler::add_scaled(std::vector<double>& acc, const MemoryCount& d, double f) {
  const auto c = counter_values(d.c);
  for (std::size_t i = 0; i < c.size(); ++i) acc[i] += f * static_cast<double>(c[i]);
  std::size_t i = c.size();
  for (const core::TensorTraffic* level : {&d.dram, &d.lts, &d.l1})
    for (std::size_t t = 0; t < core::kNumTensors; ++t) {
      acc[i++] += f * static_cast<double>(level->by_tensor[t].read);
      acc[i++] += f * static_cast<double>(level->by_tensor[t].write);
    }
}

void Sampler::reset(Slot& s, std::uint64_t cta, double now) {
  s.cta = cta;
  s.have_sig = s.measure = s.skipped_any = false;
  s.run_pos = 0;
  s.since_skip = kLeadSteps;
  s.cta_start = s.step_start = now;
  s.pending = s.last_span = 0;
  s.n = s.sum = s.sumsq = 0;
  s.pool = kNoPool;
  s.step_counted = false;
  s.keys.clear();  // keeps its capacity
  s.group_latency = 0;
  s.groups = 0;
  s.shape = {};
  s.cta_stats = {};
  s.cta_smem = {};
  s.phantom = s.warm = false;
  s.ff_pending = s.ff = false;
  s.x_based = s.x_done = false;
  s.x_extra.clear();
}

void Sampler::count_step(Slot& s, std::size_t n_ops, std::uint64_t sig) {
  if (s.shape.steps++ == 0) s.shape.first_sig = sig;
  s.shape.last_sig = sig;
  s.shape.ops += n_ops;
}

Sampler::KeyAcc& Sampler::key(Slot& s, std::uint32_t k) {
  for (KeyAcc& a : s.keys)
    if (a.key == k) return a;
  s.keys.push_back({});
  s.keys.back().key = k;
  return s.keys.back();
}

void Sampler::add_skipped(Slot& s, double time, double standard_error) {
  s.pending += time;
  s.skipped_any = true;
  skipped_time_ += time;
  error_sum_ += standard_error;
}

std::pair<double, double> Sampler::skipped_step_time(Slot& s) {
  const double mean = s.sum / s.n;
  const double var = std::max(0.0, s.sumsq / s.n - mean * mean) / s.n;  // of the mean
  if (s.pool == kNoPool) {
    std::uint32_t i = 0;
    while (i < pools_.size() && (pools_[i].sig != s.sig || pools_[i].warm_end != s.warm_end)) ++i;
    if (i == pools_.size()) pools_.push_back({s.sig, s.warm_end});
    s.pool = i;
    s.pool_n = 0;
  }
  RunPool& p = pools_[s.pool];
  if (s.pool_n != s.n) {  // new samples since the CTA's last contribution: replace it
    if (s.pool_n > 0) {
      p.ctas -= 1;
      p.sum -= s.pool_mean;
      p.sumsq -= s.pool_mean * s.pool_mean;
      p.var -= s.pool_var;
    }
    p.ctas += 1;
    p.sum += mean;
    p.sumsq += mean * mean;
    p.var += var;
    s.pool_n = s.n;
    s.pool_mean = mean;
    s.pool_var = var;
  }
  if (p.ctas < kMinPool) return {mean, std::sqrt(var)};
  // The CTAs' means scatter by their sampling noise (their variances' mean) and by real
  // differences between CTAs (tau2, what is left of the scatter): a CTA keeps the share
  // w = tau2 / (tau2 + var) of its deviation from the pool's mean (empirical Bayes).
  const double pooled = p.sum / p.ctas;
  const double scatter = std::max(0.0, (p.sumsq - p.ctas * pooled * pooled) / (p.ctas - 1));
  const double tau2 = std::max(0.0, scatter - p.var / p.ctas);
  const double w = tau2 + var > 0 ? tau2 / (tau2 + var) : 1.0;
  // Limited translation (Efron and Morris 1972): a mean moves by at most kMaxShift of its own
  // standard errors, so a CTA that is really slower than the rest (the one that ends the
  // launch) stays slower.
  const double se = std::sqrt(var);
  const double shift = std::clamp((1.0 - w) * (mean - pooled), -kMaxShift * se, kMaxShift * se);
  // The standard error stays the CTA's own: the pooled mean does not see a drift of the step
  // time between the samples and the skipped steps either.
  return {mean - shift, se};
}

double Sampler::finish_cta(std::uint32_t slot, double now) {
  Slot& s = slots_[slot];
  double end = now + s.pending;
  // With classes a CTA simulated to rebuild the L2 state runs beside CTAs skipped whole (slots
  // are refilled one by one), which leave its SM's pipes to it, so it ends early; it counts as
  // its class's reference CTA, and its slot is held at least as long (an early end would pull
  // every CTA after it forward). A uniform launch rebuilds a whole wave at once, beside itself.
  if (s.warm && classes_ > 1) end = std::max(end, s.cta_start + ref(s.cta).duration);
  s.pending = 0;
  s.measure = false;
  return end;
}

std::uint64_t Sampler::decide_warm_end(const Slot& s) {
  if (s.cta >= slots_.size()) return trend_votes_ * 2 > trend_voters_ ? kLongWarmSteps : kWarmSteps;
  // A CTA of the first wave votes and keeps kWarmSteps (its wave has no burst to wait out), so
  // that every CTA of a wave simulates the same steps.
  ++trend_voters_;
  if (s.early[0] > 0 && std::fabs(s.early[1] / s.early[0] - 1.0) > kTrend) ++trend_votes_;
  return kWarmSteps;
}

void Sampler::probe(std::uint64_t ctas, const EmitStep& emit, std::uint32_t groups, std::uint64_t min_ops) {
  std::uint64_t ops = 0;  // of the probed CTAs
  auto count_steps = [&](std::uint64_t cta) {
    std::uint64_t steps = 0;
    for (;; ++steps) {
      check_ops_.clear();
      if (!emit(cta, steps, check_ops_)) return steps;
      ops += check_ops_.size();
    }
  };
  std::vector<std::uint64_t> probe_ctas, probe_steps;
  bool unequal = false;
  for (std::uint32_t i = 0; i < kProbes && ctas > 0; ++i) {
    probe_ctas.push_back(ctas == 1 ? 0 : (ctas - 1) * i / (kProbes - 1));
    probe_steps.push_back(count_steps(probe_ctas.back()));
    unequal = unequal || probe_steps.back() != probe_steps.front();
  }
  // A small launch runs in full: simulating all of it costs little (full mode runs a few million
  // ops per second), and its samples would only add their error.
  if (!probe_ctas.empty() &&
      static_cast<double>(ops) / static_cast<double>(probe_ctas.size()) * static_cast<double>(ctas) * groups <
          static_cast<double>(min_ops)) {
    disable("the launch is small (fewer tile ops than sim.min_ops, 131,072 by default)");
    inert_ = true;
    return;
  }
  if (describe_) {  // whole_ctas_only: equal waves of CTAs, or classes of CTAs (group 0's step counts)
    if (waves_could_be_skipped(ctas, count_steps)) return;
    if (unequal && find_classes(ctas, count_steps, probe_ctas, probe_steps)) return;
    inert_ = true;
    full_because_ = unequal ? "its CTAs have unequal step counts (a causal mask, uneven splits) that do not repeat "
                              "over 12 waves, and no two full waves of equal CTAs lie ahead of its last two"
                            : "its CTAs are skipped only whole (several warp groups) and no two full waves of "
                              "equal CTAs lie ahead of its last two";
    return;
  }
  if (std::any_of(probe_steps.begin(), probe_steps.end(), [](std::uint64_t x) { return x < kMinSteps; }))
    skip_steps_ = false;
  if (unequal) skip_steps_ = false;
  if (skip_steps_ && !probe_steps.empty()) {
    cta_steps_ = probe_steps.front();
    long_launch_ = waves_.size() >= kEndSpanWaves;
  }
  if (!skip_steps_ && skip_waves_) inert_ = !waves_could_be_skipped(ctas, count_steps);
  if (inert_ && unequal && find_classes(ctas, count_steps, probe_ctas, probe_steps)) inert_ = false;
  static_assert(kMinSteps == 32 && kMinClassWaves == 12, "the text below names kMinSteps and kMinClassWaves");
  if (inert_)
    full_because_ = unequal ? "its CTAs have unequal step counts (a causal mask, uneven splits) that do not repeat "
                              "over 12 waves, and no two full waves of equal CTAs lie ahead of its last two"
                            : "its CTAs have fewer than 32 loop steps and no two full waves of equal CTAs lie ahead "
                              "of its last two";
}

void Sampler::before_access(const core::MemoryCounters& c, const core::LevelTraffic& traffic, core::Tensor t) {
  before_.c = c;
  for (std::size_t x = 0; x < core::kNumTensors; ++x) before_.dram_write[x] = traffic.dram.by_tensor[x].write;
  before_.dram = traffic.dram[t];
  before_.lts = traffic.lts[t];
  before_.l1 = traffic.l1[t];
  before_.t = t;
}

void Sampler::after_access(std::uint32_t slot, const core::TileOp& op, const core::MemoryCounters& c,
                           const core::LevelTraffic& traffic, bool done) {
  KeyAcc& a = key(slots_[slot], key_of(op));
  MemoryCount& d = a.delta;
  const core::MemoryCounters& b = before_.c;
  d.c.lts_sectors += c.lts_sectors - b.lts_sectors;
  d.c.lts_hit_sectors += c.lts_hit_sectors - b.lts_hit_sectors;
  d.c.lts_bytes += c.lts_bytes - b.lts_bytes;
  d.c.l2_request_bytes += c.l2_request_bytes - b.l2_request_bytes;
  d.c.l1_hits += c.l1_hits - b.l1_hits;
  d.c.l1_misses += c.l1_misses - b.l1_misses;
  d.c.l2_near_hits += c.l2_near_hits - b.l2_near_hits;
  d.c.l2_far_hits += c.l2_far_hits - b.l2_far_hits;
  d.c.l2_misses += c.l2_misses - b.l2_misses;
  d.c.l2_writebacks += c.l2_writebacks - b.l2_writebacks;
  for (std::size_t x = 0; x < core::kNumTensors; ++x)
    d.dram.by_tensor[x].write += traffic.dram.by_tensor[x].write - before_.dram_write[x];
  const core::Tensor t = before_.t;
  auto add = [](core::TensorBytes& acc, const core::TensorBytes& now, const core::TensorBytes& was, bool writes) {
    acc.read += now.read - was.read;
    if (writes) acc.write += now.write - was.write;
  };
  add(d.dram[t], traffic.dram[t], before_.dram, false);  // its DRAM writes are counted above
  add(d.lts[t], traffic.lts[t], before_.lts, true);
  add(d.l1[t], traffic.l1[t], before_.l1, true);
  if (done) a.requested += static_cast<double>(op.bytes());
}

void Sampler::end_cta(std::uint32_t slot, double now) {
  Slot& s = slots_[slot];
  const double duration = now - s.cta_start;
  total_time_ += duration;
  // Counted as the reference (skipped whole, or rebuilding): its wave's share of the shared
  // tensors' DRAM reads is counted per sharing group in finish.
  if ((s.phantom || s.warm) && s.cta / wave_ < waves_.size()) ++waves_[s.cta / wave_].counted;
  const Reference& r = ref(s.cta);
  if (s.phantom) {  // skipped whole: the reference CTA's counts
    ++phantoms_;
    for (std::size_t i = 0; i < kVec; ++i) ext_[i] += r.counted[i];
    skipped_stats_ += r.stats;
    skipped_smem_ += r.smem;
    ops_skipped_ += r.shape.ops;
    skipped_time_ += duration;
    error_sum_ += r.rel_error * duration;
    s.phantom = false;
    return;
  }
  // The CTA's memory counts: its simulated and its warmed (skipped) accesses, all counted, and
  // those of its extrapolated steps.
  own_counts(s, scratch_);
  // What a CTA like it adds when skipped whole: its DRAM writes are its stored bytes (its lines
  // never enter the L2; the write-backs a CTA of the first waves causes are not yet those of the
  // steady state). Tensors stored again and again (a slot's stack frame, the dQ accumulator all
  // CTAs of a head add into) are the exception: their write-backs are those counted.
  for (const KeyAcc& a : s.keys)
    if (a.key % 2 == 1 && !core::stored_repeatedly(static_cast<core::Tensor>(a.key / 2)))
      scratch_[10 + 2 * (a.key / 2) + 1] = a.requested;
  s.shape.flops = s.cta_stats.flops;
  s.shape.lsu_bytes = s.cta_stats.lsu_bytes;
  s.shape.wavefronts = s.cta_stats.wavefronts;
  if (s.warm) {
    // Simulated to rebuild the L2 state: its counts are replaced by the reference CTA's, except
    // the DRAM writes of tensors stored once (and the write-back count): what it stores stays in
    // the L2 and reaches DRAM as counted, later, as in a full run (the reference's stored bytes
    // would count its lines twice), and the lines it evicts are written back once, as counted.
    own_counts(s, scratch_);
    for (double& x : scratch_) x = -x;
    for (std::size_t i = 0; i < kVec; ++i) {
      const std::size_t t = (i - 10) / 2;
      const bool own = i == 9 || (i >= 10 && t < core::kNumTensors && i % 2 == 1 &&
                                  !core::stored_repeatedly(static_cast<core::Tensor>(t)));
      if (!own) ext_[i] += scratch_[i] + r.counted[i];
    }
    return;
  }
  wave_done(s.cta, s, duration, scratch_);
}

void Sampler::finish(core::LaunchTotals& t, core::LevelTraffic& traffic,
                     const std::array<double, core::kNumTensors>& dram_read_factor) const {
  auto r = [](double x) { return static_cast<std::uint64_t>(std::llround(std::max(0.0, x))); };
  auto& c = t.memory;
  std::uint64_t* counters[10] = {&c.lts_sectors, &c.lts_hit_sectors, &c.lts_bytes, &c.l2_request_bytes, &c.l1_hits,
                                 &c.l1_misses,   &c.l2_near_hits,    &c.l2_far_hits, &c.l2_misses,     &c.l2_writebacks};
  for (std::size_t i = 0; i < 10; ++i) *counters[i] = r(static_cast<double>(*counters[i]) + ext_[i]);
  // The DRAM reads of CTAs counted as the reference, per wave from its sharing groups.
  std::vector<double> ext = ext_;
  const double per = static_cast<double>(wave_);
  for (std::size_t k = 0; k < group_cost_.size(); ++k)
    for (std::uint64_t w = 0; group_cost_[k].on && w < waves_.size(); ++w) {
      if (waves_[w].counted == 0) continue;
      const auto [all, fresh] = groups(w, k);
      const double wave_reads = group_cost_[k].fresh * fresh + group_cost_[k].cont * (all - fresh);
      ext[10 + 2 * k] += static_cast<double>(waves_[w].counted) / per * wave_reads;
    }
  for (std::size_t k = 0; k < core::kNumTensors; ++k) ext[10 + 2 * k] *= dram_read_factor[k];
  std::size_t i = 10;
  for (core::TensorTraffic* level : {&traffic.dram, &traffic.lts, &traffic.l1})
    for (std::size_t k = 0; k < core::kNumTensors; ++k) {
      level->by_tensor[k].read = r(static_cast<double>(level->by_tensor[k].read) + ext[i++]);
      level->by_tensor[k].write = r(static_cast<double>(level->by_tensor[k].write) + ext[i++]);
    }
  traffic.smem += skipped_smem_;
  t.dram_read = traffic.dram.total_read();
  t.dram_write = traffic.dram.total_write();
  t.sampled = true;
  t.ctas_skipped = phantoms_;
  t.ctas_fast_forwarded = fast_forwarded_;
  t.ctas_extrapolated = extrapolated_;
  const double all = static_cast<double>(ops_simulated_ + ops_skipped_);
  t.sampled_fraction = all > 0 ? static_cast<double>(ops_simulated_) / all : 1.0;
  t.sampling_error = total_time_ > 0 ? error_sum_ / total_time_ : 0.0;
  if (ops_skipped_ == 0 && phantoms_ == 0)
    t.in_full_because = full_because_ ? full_because_ : "no step was skipped and no wave was steady";
}

}  // namespace attnsim::engine
