// LaunchSimulator::trace_op / trace_skipped: one op, or one skipped step or CTA (sim.mode: sampled),
// of a traced CTA to EngineOptions::trace (attnsim run --trace).
#include "sim/engine/launch_simulator.h"

namespace attnsim::engine {

template <class Memory>
void LaunchSimulator<Memory>::trace_op(const CtaSlot& s, std::uint32_t group, WarpGroup& g, double done) {
  const core::TileOp& op = g.ops[g.pc];
  TraceRecord r;
  r.launch_name = trace_name_;
  r.cta = s.cta;
  r.sm = s.sm;
  r.group = group;
  r.step = g.step > 0 ? g.step - 1 : 0;  // g.step counts the steps emitted so far
  r.op_index = static_cast<std::uint32_t>(g.pc);
  r.op = &op;
  r.start = g.op_start < 0 ? done : g.op_start;  // a released waiter reached its op before
  r.end = done;
  // An async load's data (a queued cp.async's is not known yet: 0), an async MMA's commit group.
  if (op.kind == core::OpKind::kLoad && op.async && !(queue_copies_ && !op.bulk)) r.ready = g.load.done;
  if (op.kind == core::OpKind::kMma && op.async) r.ready = g.open_mma;
  options_.trace(r);
  g.op_start = -1;
}

template <class Memory>
void LaunchSimulator<Memory>::trace_skipped(const CtaSlot& s, std::uint32_t group, WarpGroup& g, double end,
                                            TraceRecord::Skipped what) {
  TraceRecord r;
  r.launch_name = trace_name_;
  r.cta = s.cta;
  r.sm = s.sm;
  r.group = group;
  r.step = g.step > 0 ? g.step - 1 : 0;
  r.skipped = what;
  r.start = g.op_start < 0 ? end : g.op_start;
  r.end = end;
  options_.trace(r);
  g.op_start = -1;
}

template void LaunchSimulator<MemorySystem>::trace_op(const CtaSlot&, std::uint32_t, WarpGroup&, double);
template void LaunchSimulator<ScratchpadMemory>::trace_op(const CtaSlot&, std::uint32_t, WarpGroup&, double);
template void LaunchSimulator<MemorySystem>::trace_skipped(const CtaSlot&, std::uint32_t, WarpGroup&, double,
                                                           TraceRecord::Skipped);
template void LaunchSimulator<ScratchpadMemory>::trace_skipped(const CtaSlot&, std::uint32_t, WarpGroup&, double,
                                                               TraceRecord::Skipped);

}  // namespace attnsim::engine
