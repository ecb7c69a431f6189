// The ops between the warp groups of a launch's CTAs: mbarrier arrive / wait and TMA
// complete_tx (PTX ISA, mbarrier), named barriers (bar.sync / bar.arrive), delivery of multicast
// loads and remote arrivals within a thread-block cluster, and the warp groups' budgets.
#include <string>

#include "sim/core/errors.h"
#include "sim/engine/launch_simulator.h"

namespace attnsim::engine {

template <class Memory>
void LaunchSimulator<Memory>::check_groups() const {
  auto bad = [&](const std::string& why) {
    throw core::ConfigError(core::ConfigProblem{device_.source_file, 0, "regs_per_thread",
                                                "launch '" + launch_.name() + "': " + why});
  };
  if (groups_.empty() || groups_.size() > 32) bad("a CTA has 1 to 32 warp groups");
  if (mbar_counts_.size() >= core::kNoBarrier) bad("more than 254 mbarriers");
  if (groups_.size() == 1) return;
  const std::uint64_t warp = device_.sm.warp_size ? device_.sm.warp_size : 32;
  std::uint64_t warps = 0, regs = 0;
  for (const core::WarpGroupSpec& g : groups_) {
    warps += g.warps;
    regs += g.warps * warp * (g.regs_per_thread ? g.regs_per_thread : shape_.regs_per_thread);
  }
  if (warps != warps_per_cta_)
    bad("its warp groups have " + std::to_string(warps) + " warps, its CTA " + std::to_string(warps_per_cta_));
  // setmaxnreg moves registers within the CTA's launch allocation (PTX ISA, setmaxnreg): the
  // groups' registers after it cannot exceed the allocation occupancy was computed from.
  const std::uint64_t budget = static_cast<std::uint64_t>(warps_per_cta_) * warp * shape_.regs_per_thread;
  if (regs > budget)
    bad("its warp groups ask for " + std::to_string(regs) + " registers after setmaxnreg, more than the " +
        std::to_string(budget) + " the CTA is launched with");
}

template <class Memory>
std::int64_t LaunchSimulator<Memory>::cluster_member(const CtaSlot& s, std::uint32_t rank) const {
  if (rank >= scheduler_.cluster_size()) return -1;
  if (scheduler_.cluster_size() == 1) return &s - slots_.data();
  const std::uint32_t k = s.cluster_slots[rank];
  const CtaSlot& o = slots_[k];
  return o.active && o.cta == s.cluster_base + rank ? static_cast<std::int64_t>(k) : -1;
}

template <class Memory>
Mbarrier& LaunchSimulator<Memory>::mbarrier(CtaSlot& s, const core::TileOp& op) const {
  if (op.barrier >= s.mbarriers.size())
    throw core::SimError("launch '" + launch_.name() + "': CTA " + std::to_string(s.cta) + " uses mbarrier " +
                         std::to_string(op.barrier) + " of " + std::to_string(s.mbarriers.size()));
  return s.mbarriers[op.barrier];
}

// Calls f(slot) for the CTAs an op with this multicast mask reaches: this CTA when 0, else the
// cluster's ranks in the mask that are resident (a rank that has retired is skipped).
template <class Memory>
template <class F>
void LaunchSimulator<Memory>::for_targets(CtaSlot& s, std::uint32_t mask, F&& f) {
  if (mask == 0) {
    f(static_cast<std::uint32_t>(&s - slots_.data()));
    return;
  }
  for (; mask != 0; mask &= mask - 1) {
    const std::int64_t k = cluster_member(s, static_cast<std::uint32_t>(__builtin_ctz(mask)));
    if (k >= 0) f(static_cast<std::uint32_t>(k));
  }
}

template <class Memory>
void LaunchSimulator<Memory>::wake_mbar(std::uint32_t slot, Mbarrier& b) {
  std::size_t kept = 0;
  for (const Mbarrier::Waiter& w : b.waiters) {
    const double t = b.completed(w.phase);
    if (t < 0) {
      b.waiters[kept++] = w;
      continue;
    }
    if (slots_[slot].traced) trace_op(slots_[slot], w.group, slots_[slot].groups[w.group], t);
    ++slots_[slot].groups[w.group].pc;  // past its kMbarWait
    guard_.note_progress();
    queue_.push(t, EventKind::kResume, slot, w.group);
  }
  b.waiters.resize(kept);
}

template <class Memory>
void LaunchSimulator<Memory>::mbar_arrive(CtaSlot& s, const core::TileOp& op, double now) {
  const std::uint32_t count = op.count ? static_cast<std::uint32_t>(op.count) : 1;
  mbarrier(s, op);  // checks the id
  for_targets(s, op.multicast, [&](std::uint32_t k) {
    Mbarrier& b = slots_[k].mbarriers[op.barrier];
    if (b.arrive(count, op.tx_bytes, now)) wake_mbar(k, b);
  });
}

template <class Memory>
void LaunchSimulator<Memory>::complete_tx(CtaSlot& s, const core::TileOp& op, double at) {
  mbarrier(s, op);
  const auto bytes = static_cast<std::int64_t>(op.bytes());
  for_targets(s, op.multicast, [&](std::uint32_t k) {
    Mbarrier& b = slots_[k].mbarriers[op.barrier];
    if (b.complete_tx(bytes, at)) wake_mbar(k, b);
  });
}

template <class Memory>
void LaunchSimulator<Memory>::deliver_fills(CtaSlot& s, const core::TileOp& op, double now) {
  if (!access_.fills_take_banks()) return;
  const core::Bytes bytes = op.bytes();
  const auto self = static_cast<std::uint32_t>(&s - slots_.data());
  for_targets(s, op.multicast, [&](std::uint32_t k) {
    stats_.fill_bytes += bytes;
    if (k != self) access_.fill(sms_[slots_[k].sm], bytes, now);
  });
}

template <class Memory>
double LaunchSimulator<Memory>::mbar_wait(std::uint32_t, CtaSlot& s, std::uint32_t group, const core::TileOp& op,
                                          double now) {
  Mbarrier& b = mbarrier(s, op);
  const double t = b.completed(op.count);
  if (t >= 0) return std::max(now, t);
  b.waiters.push_back({group, op.count});
  return -1;
}

template <class Memory>
double LaunchSimulator<Memory>::named_sync(std::uint32_t slot, CtaSlot& s, std::uint32_t group, std::uint32_t id,
                                           std::uint64_t count, bool wait, double now) {
  if (id >= CtaSlot::kNamedBarriers)
    throw core::SimError("launch '" + launch_.name() + "': named barrier " + std::to_string(id) + " (0..15)");
  NamedBarrier& nb = s.named[id];
  const std::uint64_t need = count ? count : static_cast<std::uint64_t>(warps_per_cta_) *
                                                 (device_.sm.warp_size ? device_.sm.warp_size : 32);
  nb.arrived += s.groups[group].threads;
  nb.ready = std::max(nb.ready, now);
  if (nb.arrived < need) {
    if (!wait) return now;
    nb.waiting |= 1u << group;
    return -1;
  }
  const double release = nb.ready + kBarrierCycles;
  for (std::uint32_t m = nb.waiting; m != 0; m &= m - 1) {
    const auto g = static_cast<std::uint32_t>(__builtin_ctz(m));
    if (s.traced) trace_op(s, g, s.groups[g], release);
    ++s.groups[g].pc;  // past its kNamedSync
    queue_.push(release, EventKind::kResume, slot, g);
  }
  nb = NamedBarrier{};
  return wait ? release : now;
}

// The members defined here, for both memories (launch_simulator.cpp instantiates the others).
#define ATTNSIM_SYNC_MEMBERS(M)                                                                              \
  template void LaunchSimulator<M>::check_groups() const;                                                   \
  template std::int64_t LaunchSimulator<M>::cluster_member(const CtaSlot&, std::uint32_t) const;            \
  template Mbarrier& LaunchSimulator<M>::mbarrier(CtaSlot&, const core::TileOp&) const;                     \
  template void LaunchSimulator<M>::wake_mbar(std::uint32_t, Mbarrier&);                                    \
  template void LaunchSimulator<M>::mbar_arrive(CtaSlot&, const core::TileOp&, double);                     \
  template void LaunchSimulator<M>::complete_tx(CtaSlot&, const core::TileOp&, double);                     \
  template void LaunchSimulator<M>::deliver_fills(CtaSlot&, const core::TileOp&, double);                   \
  template double LaunchSimulator<M>::mbar_wait(std::uint32_t, CtaSlot&, std::uint32_t, const core::TileOp&, \
                                                double);                                                    \
  template double LaunchSimulator<M>::named_sync(std::uint32_t, CtaSlot&, std::uint32_t, std::uint32_t,      \
                                                 std::uint64_t, bool, double);
ATTNSIM_SYNC_MEMBERS(MemorySystem)
ATTNSIM_SYNC_MEMBERS(ScratchpadMemory)
#undef ATTNSIM_SYNC_MEMBERS

}  // namespace attnsim::engine
