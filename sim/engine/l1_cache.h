// An SM's L1 data cache for global loads: 128-B lines, 64-way set-associative LRU (high associativity: the real L1 shows no conflict misses below capacity), capacity =
// unified L1/shared bytes minus the shared-memory carve-out. Loads allocate; stores write
// through without allocating (they do not touch it). Tags only, no sectors, no timing.
#pragma once

#include <cstdint>

#include "sim/core/types.h"
#include "sim/engine/set_assoc_array.h"

namespace attnsim::engine {

class L1Cache {
 public:
  static constexpr std::uint32_t kWays = 64;

  L1Cache() = default;
  // `line_bytes`: the tracked unit (the line, or l2.tracking_bytes in the block model, where
  // the L1 also keeps which of the unit's `sectors` sectors it holds).
  L1Cache(core::Bytes capacity_bytes, core::Bytes line_bytes, std::uint32_t sectors = 4);

  bool enabled() const { return enabled_; }
  // Looks `line` up; on a miss allocates it. Returns true on a hit: the unit is present and
  // holds every sector of `sectors` (0: presence alone, the line model). Adds `sectors`.
  bool load(std::uint64_t line, std::uint64_t sectors = 0);

 private:
  bool enabled_ = false;
  SetAssocArray array_;
};

}  // namespace attnsim::engine
