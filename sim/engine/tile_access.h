// Tile access: issues a tile load's or store's pieces (128-B lines, or l2.tracking_bytes units
// in the block model) at the current time through the SM's LSU into the memory system, within
// the load credits, and schedules the kCredit events that return them. The two L2 models are
// two policy types, LineAccess and BlockAccess; the memory (MemorySystem for a GPU,
// ScratchpadMemory) is a template parameter, so a piece costs no virtual call. Leaves out request
// coalescing across CTAs.
//
// Line model: as many whole pieces as the credit room allows; a load that fits in its credits
// costs no event. Block model: a CTA short of its own allowance issues a unit's piece whole or
// not at all, overdrawing or idling its allowance so that the bytes it holds in flight average
// the allowance over time (LoadCredits::account): one L2 access and one credit event per unit.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/tile_op.h"
#include "sim/engine/cta_slot.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/load_credits.h"
#include "sim/engine/memory_system.h"
#include "sim/engine/scratchpad_memory.h"
#include "sim/engine/sm.h"

namespace attnsim::engine {

// 128-B lines: pieces stop at line ends, rows are issued one by one.
struct LineAccess {
  static constexpr bool kBlock = false;
};
// Tracking units (l2.tracking_bytes): a tile with contiguous rows is one long row; credits of a
// CTA with an allowance are dithered (whole units, LoadCredits::account).
struct BlockAccess {
  static constexpr bool kBlock = true;
};

template <class Memory>
class TileAccess {
 public:
  // `l1_for_sync_loads`: synchronous loads may hit in / allocate into the SM's L1.
  // `fill_wavefront_bytes`: the bytes one shared-memory wavefront moves (banks x bank width); the
  // bytes of an async copy (cp.async, TMA) occupy the SM's banks for bytes / it cycles from the
  // time they are issued, as they are written into shared memory (0: they take no bank time).
  TileAccess(Memory& memory, EventQueue& queue, const LoadCredits& credits, bool l1_for_sync_loads,
             core::Bytes fill_wavefront_bytes)
      : memory_(memory), queue_(queue), credits_(credits), l1_for_sync_loads_(l1_for_sync_loads),
        block_(memory.block_model()),
        cycles_per_fill_byte_(fill_wavefront_bytes ? 1.0 / static_cast<double>(fill_wavefront_bytes) : 0.0) {}
  bool fills_take_banks() const { return cycles_per_fill_byte_ > 0; }
  // Occupies `sm`'s shared-memory banks with `bytes` an async copy writes there, from `now`.
  void fill(Sm& sm, core::Bytes bytes, double now) const {
    if (cycles_per_fill_byte_ > 0) sm.smem.hold(now, static_cast<double>(bytes) * cycles_per_fill_byte_);
  }

  // Issues what the credits allow of the load `op` of CTA s (in slot `slot`, on `sm`) from
  // cursor `at` on, and moves `at`; returns true once all of it is issued, false when the CTA
  // waits for credits (it is set waiting; a kCredit event resumes it).
  bool load(std::uint32_t slot, CtaSlot& s, const core::TileOp& op, LoadCursor& at, Sm& sm, double now) {
    return block_ ? load_as<BlockAccess>(slot, s, op, at, sm, now) : load_as<LineAccess>(slot, s, op, at, sm, now);
  }
  // Issues the store `op` of a CTA on SM `sm_index` (= sm); stores take no credits.
  void store(std::uint32_t sm_index, Sm& sm, const core::TileOp& op, double now);
  // Functional warming (sim.mode: sampled): the load or store `op` of a skipped step, by SM
  // `sm_index`, passes the caches piece by piece as load/store would issue it (Memory::warm:
  // the state and counts, no time, no credits).
  // Over [now, now + duration), the skipped step's span, the HBM channels and L2 ports carry its
  // bytes as a fluid (Memory::occupy); returns when they could have moved them.
  double warm(std::uint32_t sm_index, const core::TileOp& op, double now, double duration);

 private:
  template <class Policy>
  bool load_as(std::uint32_t slot, CtaSlot& s, const core::TileOp& op, LoadCursor& at, Sm& sm, double now);

  Memory& memory_;
  EventQueue& queue_;
  const LoadCredits& credits_;
  bool l1_for_sync_loads_;
  bool block_;
  double cycles_per_fill_byte_;
  // warm(): the pieces of a tile in the sampled sets, remembered per tile (the CTAs that share a
  // tile warm the same pieces): direct-mapped by the tile's address and shape.
  struct WarmPlan {
    core::Bytes addr = 0, row_bytes = 0, row_stride = 0;
    std::uint32_t rows = 0;
    std::uint64_t all = 0, warmed = 0;  // sectors of the tile, of its sampled pieces
    std::vector<std::pair<core::Bytes, std::uint32_t>> pieces;  // sampled: address, bytes
  };
  std::vector<WarmPlan> plans_;
};

extern template class TileAccess<MemorySystem>;
extern template class TileAccess<ScratchpadMemory>;

}  // namespace attnsim::engine
