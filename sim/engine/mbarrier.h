// A CTA's synchronization objects between warp groups: mbarriers (arrival count + transaction
// bytes per phase, PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier")
// and named barriers (bar.sync / bar.arrive with a thread count). Plain state; the launch
// simulator wakes the warp groups they release.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace attnsim::engine {

// One mbarrier. A phase completes when its pending arrivals reach zero and its transaction
// count (bytes expected by arrive.expect_tx minus bytes delivered by complete_tx; either may come
// first) is zero; the next phase then starts with the initial arrival count. Times are known
// when an arrival or a TMA load is issued, so a phase's completion time is the latest of its
// arrivals and byte deliveries.
struct Mbarrier {
  struct Waiter {
    std::uint32_t group;
    std::uint64_t phase;
  };
  std::uint32_t expected = 1;  // arrivals per phase (mbarrier.init)
  std::uint32_t pending = 1;   // arrivals missing in the current phase
  std::int64_t tx = 0;         // transaction bytes expected minus delivered
  double ready = 0;            // latest arrival / delivery of the current phase
  std::uint64_t phase = 0;     // phases completed
  std::array<double, 4> completed_at{};  // completion times of the last phases (by phase & 3)
  std::vector<Waiter> waiters;           // warp groups blocked in kMbarWait

  void init(std::uint32_t count) {
    expected = pending = count ? count : 1;
    tx = 0;
    ready = 0;
    phase = 0;
    waiters.clear();
  }
  // Returns true when the current phase completed with this arrival / delivery.
  bool arrive(std::uint32_t count, std::int64_t tx_expected, double now) {
    pending = count >= pending ? 0 : pending - count;
    tx += tx_expected;
    ready = std::max(ready, now);
    return try_complete();
  }
  bool complete_tx(std::int64_t bytes, double at) {
    tx -= bytes;
    ready = std::max(ready, at);
    return try_complete();
  }
  // The completion time of phase p if it has completed, else a negative number.
  double completed(std::uint64_t p) const {
    if (p >= phase) return -1;
    return phase - p <= completed_at.size() ? completed_at[p & 3] : 0;
  }

 private:
  bool try_complete() {
    if (pending != 0 || tx != 0) return false;
    completed_at[phase & 3] = ready;
    ++phase;
    pending = expected;
    ready = 0;
    return true;
  }
};

// One named barrier (bar.sync id, count): releases its waiting groups kBarrierCycles after the
// `count`-th thread arrived.
struct NamedBarrier {
  std::uint32_t arrived = 0;    // threads
  double ready = 0;             // latest arrival
  std::uint32_t waiting = 0;    // bit g: warp group g waits in kNamedSync
};

}  // namespace attnsim::engine
