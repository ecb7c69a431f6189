// LaunchSimulator's hooks for sim.mode: sampled (the decisions are the Sampler's, sampler.h).
#include "sim/engine/launch_simulator.h"

namespace attnsim::engine {

template <class Memory>
void LaunchSimulator<Memory>::init_sampler() {
  sampler_ = Sampler(static_cast<std::uint32_t>(slots_.size()), scheduler_.num_ctas(),
                     !memory_.l2_enabled() || device_.l2.count_final_writeback);
  // A launch that times its blocking loads one by one (pointer_chase) is simulated in full.
  if (record_blocking_) return sampler_.disable();
  sampler_.probe(scheduler_.num_ctas(), [this](std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& ops) {
    return launch_.emit_step(cta, step, ops);
  });
}

template <class Memory>
bool LaunchSimulator<Memory>::sampled_dispatch(std::uint32_t slot, double now) {
  const std::uint64_t cta = slots_[slot].cta;
  const double held = sampler_.start_cta(slot, cta, now, [this, cta](std::uint64_t step, std::vector<core::TileOp>& ops) {
    return launch_.emit_step(cta, step, ops);
  });
  return held > 0 && sampled_sleep(slot, now + held, now);
}

template <class Memory>
bool LaunchSimulator<Memory>::sampled_sleep(std::uint32_t slot, double until, double now) {
  if (until <= now) return false;
  queue_.push(until, EventKind::kResume, slot);
  return true;
}

template <class Memory>
bool LaunchSimulator<Memory>::sampled_step(std::uint32_t slot, CtaSlot& s, double now) {
  const double begin = now + sampler_.pending(slot);  // when this step would start
  const double start = sampler_.on_step(slot, s.ops, now, [this](const core::TileOp& op, LaunchStats& st, core::TensorTraffic& smem) {
    count_op(op, banks_, st, smem);
  });
  if (start < 0) {
    // Skipped: its counts are taken. Its async-copy groups are committed and waited for as the
    // step would have, each done the CTA's mean group latency after the step's start, so the
    // steps simulated after the skip find the pipeline full, as in the steady state.
    const double latency = sampler_.group_latency(slot);
    bool loads = false;
    for (const core::TileOp& op : s.ops) {
      if (op.kind == core::OpKind::kLoad && op.async) loads = true;
      if (op.kind == core::OpKind::kCommit && s.group_count < kMaxAsyncGroups) {
        s.groups[(s.group_head + s.group_count) % kMaxAsyncGroups] = loads ? begin + latency : 0.0;
        ++s.group_count;
        loads = false;
      }
      if (op.kind == core::OpKind::kWait)
        while (s.group_count > op.count) {
          s.group_head = (s.group_head + 1) % kMaxAsyncGroups;
          --s.group_count;
        }
    }
    s.ops.clear();
    return false;
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
  template bool LaunchSimulator<M>::sampled_step(std::uint32_t, CtaSlot&, double);                 \
  template void LaunchSimulator<M>::add_skipped_stats();
ATTNSIM_SAMPLING_HOOKS(MemorySystem)
ATTNSIM_SAMPLING_HOOKS(ScratchpadMemory)
#undef ATTNSIM_SAMPLING_HOOKS

}  // namespace attnsim::engine
