// Async copies (cp.async) queued in the SM's load/store path: the warp group goes on while their
// lines wait for load credits; a copy group completes when its last queued copy's lines are back.
#include "sim/engine/launch_simulator.h"

namespace attnsim::engine {

template <class Memory>
void LaunchSimulator<Memory>::queue_copy(std::uint32_t slot, std::uint32_t group, WarpGroup& g, const core::TileOp& op,
                                         double now) {
  g.queued.push_back({op, g.copies.next()});
  if (g.queued.size() - g.queued_head == 1) issue_copies(slot, group, now);  // none ahead of it: issue now
}

template <class Memory>
void LaunchSimulator<Memory>::issue_copies(std::uint32_t slot, std::uint32_t group, double now) {
  CtaSlot& s = slots_[slot];
  WarpGroup& g = s.groups[group];
  Sm& sm = sms_[s.sm];
  while (g.copies_queued()) {
    const QueuedCopy& q = g.queued[g.queued_head];
    if (!g.copy_started) {
      g.copy_started = true;
      g.copy = {0, 0, now};
    }
    if (sampling_) sampler_.before_access(memory_.counters(), memory_.traffic(), q.op.tensor);
    const bool issued = access_.load(slot, s, q.op, g.copy, sm, now);
    if (sampling_) sampler_.after_access(slot, q.op, memory_.counters(), memory_.traffic(), issued);
    if (!issued) {
      s.copy_waiters |= 1u << group;
      break;
    }
    g.copy_started = false;
    if (q.group == g.copies.next()) g.open_group = std::max(g.open_group, g.copy.done);  // not committed yet
    else g.copies.raise(q.group, g.copy.done);
    ++g.queued_head;
  }
  if (!g.copies_queued()) {
    g.queued.clear();
    g.queued_head = 0;
  }
  if (g.wait_copies) {  // the group waits for queued copies: it checks again
    g.wait_copies = false;
    advance(slot, group, now);
  }
}

#define ATTNSIM_COPY_HOOKS(M)                                                                                 \
  template void LaunchSimulator<M>::queue_copy(std::uint32_t, std::uint32_t, WarpGroup&, const core::TileOp&,  \
                                               double);                                                      \
  template void LaunchSimulator<M>::issue_copies(std::uint32_t, std::uint32_t, double);
ATTNSIM_COPY_HOOKS(MemorySystem)
ATTNSIM_COPY_HOOKS(ScratchpadMemory)
#undef ATTNSIM_COPY_HOOKS

}  // namespace attnsim::engine
