// A resident CTA slot of an SM: the CTA running in it, its warp groups (one op stream each;
// warp_group.h), its mbarriers and named barriers, the load bytes it holds in flight, and the
// slots of its thread-block cluster.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/tile_op.h"
#include "sim/core/types.h"
#include "sim/engine/mbarrier.h"
#include "sim/engine/warp_group.h"

namespace attnsim::engine {

struct CtaSlot {
  static constexpr std::uint32_t kMaxAsyncGroups = AsyncGroups::kMax;  // committed, not yet waited-for groups
  static constexpr std::uint32_t kMaxCluster = 8;                      // portable cluster size limit
  static constexpr std::uint32_t kNamedBarriers = 16;                  // bar.sync ids 0..15

  std::uint64_t cta = 0;
  std::uint32_t sm = 0;
  bool active = false;
  bool waiting_credit = false;
  bool traced = false;  // its ops are reported (EngineOptions::trace)
  std::vector<WarpGroup> groups;
  std::uint32_t groups_left = 0;     // groups not finished; the CTA retires at 0
  std::uint32_t credit_waiters = 0;  // bit g: group g waits for load credits
  std::uint32_t copy_waiters = 0;    // bit g: group g's queued async copies wait for load credits
  std::vector<Mbarrier> mbarriers;
  std::array<NamedBarrier, kNamedBarriers> named{};
  std::uint64_t cluster_base = 0;    // CTA number of the cluster's rank 0
  std::array<std::uint32_t, kMaxCluster> cluster_slots{};  // slot of each rank (cluster_size > 1)
  core::Bytes inflight = 0;
  core::Bytes credit_need = 0;  // waiting_credit: room needed before the CTA resumes
  // Block model: the running integral, in byte-cycles, of the CTA allowance minus the bytes
  // in flight over the time the CTA waits for credits or holds more than its allowance;
  // balance_t: when it was last brought up to date (LoadCredits::account).
  double credit_balance = 0;
  double balance_t = 0;
};

}  // namespace attnsim::engine
