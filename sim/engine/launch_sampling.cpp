// LaunchSimulator's hooks for sim.mode: sampled (the decisions are the Sampler's, sampler.h).
#include "sim/engine/launch_simulator.h"

namespace attnsim::engine {

template <class Memory>
void LaunchSimulator<Memory>::init_sampler() {
  sampler_ = Sampler(static_cast<std::uint32_t>(slots_.size()), scheduler_.num_ctas(),
                     !memory_.l2_enabled() || device_.l2.count_final_writeback);
  sampler_.set_fast_forward(options_.sampled_fast_forward);
  sampler_.set_memory(static_cast<double>(device_.l2.capacity_bytes),
                      device_.gbps_to_bytes_per_cycle(device_.hbm.bandwidth_gbps));
  // A launch that times its blocking loads one by one (pointer_chase) is simulated in full. So is
  // a launch of clusters: a CTA skipped whole would leave its cluster's multicast loads and
  // barriers behind.
  if (record_blocking_) return sampler_.disable("it times its blocking loads one by one");  // sampling_ stays false
  if (shape_.cluster_size > 1) return sampler_.disable("its CTAs run in clusters");
  // A scratchpad core holds tens of CTAs: a CTA timing a step beside others that sleep through
  // skipped ones finds the core's pipes idle, and the samples come out fast (flash2 B2 H8 N4096
  // d128 on scratchpad-accel -22.9 %; docs/sampling.md, known limits). Such runs are cheap in full.
  if (device_.kind == core::DeviceKind::kScratchpad)
    return sampler_.disable("scratchpad cores: samples beside skipped steps would find the pipes idle");
  // Warp-specialized CTAs (several warp groups) or mbarriers: a skipped step would leave the other
  // groups' barrier phases behind, so only whole CTAs are skipped.
  auto emit0 = [this](std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& ops) {
    return launch_.emit_group_step(cta, 0, step, ops);
  };
  if (groups_.size() != 1 || !mbar_counts_.empty()) {
    memory_.enable_background(false);  // CTAs skipped whole load the HBM channels (fluid_load.h)
    sampler_.whole_ctas_only();
    sampler_.probe(scheduler_.num_ctas(), emit0, static_cast<std::uint32_t>(groups_.size()),
                   options_.sampled_min_ops);  // equal waves, or classes of CTAs of unequal lengths
    sampling_ = !sampler_.inert();  // nothing to skip: run as in full mode, without the hooks
    return;
  }
  sampler_.probe(scheduler_.num_ctas(), emit0, 1, options_.sampled_min_ops);
  // Where nothing can be skipped (no two consecutive waves of CTAs with equal step counts, and
  // steps are not skipped), the launch runs as in full mode, without the hooks' cost.
  sampling_ = !sampler_.inert();
  sample_steps_ = sampling_;  // the sampler's per-step state is the slot's group 0
  if (sampler_.skips_steps()) {
    memory_.set_warm_stride(Sampler::kWarmSetStride);
    memory_.count_writes_when_stored(device_.l2.count_final_writeback);
  }
  // CTAs skipped whole load the HBM channels, skipped steps the L2 ports too (fluid_load.h).
  memory_.enable_background(sampler_.skips_steps());
}

template <class Memory>
bool LaunchSimulator<Memory>::sampled_dispatch(std::uint32_t slot, double now) {
  const std::uint64_t cta = slots_[slot].cta;
  // With classes, a CTA that would be skipped whole beside a simulated CTA from before the span
  // is simulated instead: a CTA skipped whole leaves the SM's pipes to its mate, which would end
  // early and pull the CTAs after it forward.
  bool beside_earlier = false;
  if (sampler_.has_classes()) {  // the SM's slots are sm * slots_per_sm_ + k (CtaScheduler)
    const std::uint32_t first = slots_[slot].sm * slots_per_sm_;
    for (std::uint32_t j = first; j < first + slots_per_sm_ && !beside_earlier; ++j)
      beside_earlier = j != slot && slots_[j].active && sampler_.before_span(j);
  }
  const double held = sampler_.start_cta(
      slot, cta, now,
      [this, cta](std::uint64_t step, std::vector<core::TileOp>& ops) { return launch_.emit_group_step(cta, 0, step, ops); },
      beside_earlier);
  if (held <= 0) {  // simulated
    if (sampler_.describes_ctas())
      sampler_.describe_cta(
          slot, static_cast<std::uint32_t>(groups_.size()),
          [this, cta](std::uint32_t g, std::uint64_t step, std::vector<core::TileOp>& ops) {
            return launch_.emit_group_step(cta, g, step, ops);
          },
          [this](const core::TileOp& op, LaunchStats& st, core::TensorTraffic& smem) { count_op(op, banks_, st, smem); });
    return false;
  }
  // Skipped whole: its reference's DRAM bytes (read, and written back) load the HBM channels as a
  // fluid over its held time, as skipped steps' do, and its slot is held at least until the
  // channels could have moved them. Without it a write-bound launch's skipped CTAs leave the
  // channels idle and the simulated CTAs after them run fast (docs/sampling.md).
  const double moved = memory_.occupy_dram(now, held, sampler_.ref_dram_bytes(cta, false),
                                           sampler_.ref_dram_bytes(cta, true));
  return sampled_sleep(slot, std::max(now + held, moved), now);
}

template <class Memory>
bool LaunchSimulator<Memory>::sampled_sleep(std::uint32_t slot, double until, double now) {
  if (until <= now) return false;
  queue_.push(until, EventKind::kResume, slot);
  return true;
}

template <class Memory>
bool LaunchSimulator<Memory>::sampled_step(std::uint32_t slot, WarpGroup& g, double now) {
  const double begin = now + sampler_.pending(slot);  // when this step would start
  const double start = sampler_.on_step(slot, g.ops, now, [this](const core::TileOp& op, LaunchStats& st, core::TensorTraffic& smem) {
    count_op(op, banks_, st, smem);
  });
  if (start < 0) {
    // The skipped step's span: its measured mean, or what the previous skipped step took where
    // the bandwidth stretched it.
    const double span = std::max(now + sampler_.pending(slot) - begin, sampler_.last_span(slot));
    // Skipped: its counts are taken. Its async-copy groups are committed and waited for as the
    // step would have, each done the CTA's mean group latency after the step's start, so the
    // steps simulated after the skip find the pipeline full, as in the steady state. Its async-MMA
    // groups (wgmma) are committed done: the CTA resumes after the skipped steps' end.
    const double latency = sampler_.group_latency(slot);
    double served = now;  // when the memory system has moved the step's bytes
    bool loads = false;
    // A fast-forwarding CTA (counted as the reference CTA, Sampler::fast_forward) warms no step
    // that stores nothing, and skips the further steps of the run here, unemitted by advance.
    const std::uint64_t cta = slots_[slot].cta;
    auto emit = [this, cta](std::uint64_t step, std::vector<core::TileOp>& ops) {
      return launch_.emit_group_step(cta, 0, step, ops);
    };
    const bool ff = sampler_.fast_forward(slot, emit) && !Sampler::stores(g.ops);
    for (const core::TileOp& op : g.ops) {
      if (!ff && (op.kind == core::OpKind::kLoad || op.kind == core::OpKind::kStore)) {
        // Functional warming: its accesses pass the caches untimed, so the L2 holds what it
        // would and the step's memory counts are counted, not extrapolated.
        sampler_.before_access(memory_.counters(), memory_.traffic(), op.tensor);
        served = std::max(served, access_.warm(slots_[slot].sm, op, begin, span));
        sampler_.after_access(slot, op, memory_.counters(), memory_.traffic(), true);
      }
      if (op.kind == core::OpKind::kLoad && op.async) loads = true;
      if (op.kind == core::OpKind::kCommit && !g.copies.full()) {
        g.copies.commit(loads ? begin + latency : 0.0);
        loads = false;
      }
      if (op.kind == core::OpKind::kWait) g.copies.wait(op.count, now);
      if (op.kind == core::OpKind::kMmaCommit && !g.mmas.full()) g.mmas.commit(0.0);
      if (op.kind == core::OpKind::kMmaWait) g.mmas.wait(op.count, now);
    }
    g.ops.clear();
    // Skips the run's further steps unwarmed, up to `limit` or the first step that is not the
    // run's; returns how many. A step whose shape the kernel says is the one skipped before it
    // (KernelLaunch::step_shape) is counted without being emitted.
    auto skip_run = [&](std::uint64_t limit) {
      constexpr std::uint64_t kUnknown = core::KernelLaunch::kUnknownStepShape;
      std::uint64_t n = 0, last_shape = kUnknown;
      std::size_t last_ops = 0;
      for (; g.step < limit; ++g.step, ++n) {
        const std::uint64_t shape = launch_.step_shape(cta, 0, g.step);
        if (shape != kUnknown && shape == last_shape) {
          sampler_.skip_unwarmed_like_last(slot, last_ops);
          continue;
        }
        ff_ops_.clear();
        if (!emit(g.step, ff_ops_) || !sampler_.skip_unwarmed(slot, ff_ops_)) break;
        last_shape = shape;
        last_ops = ff_ops_.size();
      }
      return n;
    };
    if (ff) {
      skip_run(~std::uint64_t{0});
    } else if (const std::uint64_t until = sampler_.extrapolate_until(slot, g.step); until > 0) {
      // The middle of a long run: its steps skipped unwarmed, their counts extrapolated (in a
      // launch that leaves the HBM mostly idle: they load no bandwidth).
      sampler_.extrapolate(slot, skip_run(until));
    }
    // The CTA sleeps through the skipped step: the next one is warmed (or simulated) when it
    // would start, so warmed lines enter the L2 in about the order a full run brings them in.
    // A step cannot end before the memory system has moved its bytes (skipped steps that
    // oversubscribe the bandwidth slow down as timed ones would).
    const double until = std::max(now + sampler_.take_pending(slot), served);
    sampler_.set_last_span(slot, until - begin);
    if (slots_[slot].traced) trace_skipped(slots_[slot], 0, g, until, TraceRecord::Skipped::kStep);
    return sampled_sleep(slot, until, now);
  }
  return sampled_sleep(slot, start, now);  // after skipped steps the CTA sleeps through them
}

template <class Memory>
void LaunchSimulator<Memory>::add_skipped_stats() {
  const std::uint64_t events = stats_.events;  // events stay those simulated
  stats_ += sampler_.skipped_stats();
  stats_.events = events;
}

#define ATTNSIM_SAMPLING_HOOKS(M)                                                                  \
  template void LaunchSimulator<M>::init_sampler();                                                \
  template bool LaunchSimulator<M>::sampled_dispatch(std::uint32_t, double);                       \
  template bool LaunchSimulator<M>::sampled_sleep(std::uint32_t, double, double);                  \
  template bool LaunchSimulator<M>::sampled_step(std::uint32_t, WarpGroup&, double);               \
  template void LaunchSimulator<M>::add_skipped_stats();
ATTNSIM_SAMPLING_HOOKS(MemorySystem)
ATTNSIM_SAMPLING_HOOKS(ScratchpadMemory)
#undef ATTNSIM_SAMPLING_HOOKS

}  // namespace attnsim::engine
