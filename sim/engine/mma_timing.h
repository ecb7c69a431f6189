// Timing of one MMA tile op on the SM's tensor pipe: the one place that knows how an MMA
// flavour (mma.sync, wgmma, tcgen05) is timed. Today every flavour runs at the device's one
// tensor rate (sm.tensor_flops_per_cycle), a bandwidth server shared by all warp groups.
#pragma once

#include "sim/core/tile_op.h"
#include "sim/engine/sm.h"

namespace attnsim::engine {

// Occupies the tensor pipe with op (m x n x k) from `now`; returns when its result is ready.
inline double time_mma(Sm& sm, const core::TileOp& op, double now) {
  return sm.tensor.serve(now, 2.0 * op.m * op.n * op.k);
}

}  // namespace attnsim::engine
