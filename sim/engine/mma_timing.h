// Timing of one MMA tile op on the SM's tensor pipe: the one place that knows how an MMA flavour
// (mma.sync, wgmma, tcgen05) is timed, from the device's sm.mma.<flavour> (core::MmaFlavourSpec).
#pragma once

#include "sim/core/device_spec.h"
#include "sim/core/tile_op.h"
#include "sim/engine/sm.h"

namespace attnsim::engine {

// The device's description of `flavour`, or nullptr for kDefault and for a flavour the device
// file does not describe (then the MMA runs at the dense rate, sm.tensor_flops_per_cycle).
const core::MmaFlavourSpec* mma_flavour_spec(const core::SmSpec& spec, core::MmaFlavour flavour);

// Occupies the tensor pipe with op (m x n x k, operands of `dtype`) from `now`; returns when its
// result is ready. Without a flavour spec: flops at the dense rate (the timing before flavours,
// so unchanged kernels stay exact). With one: the pipe is held flops / (flops_per_cycle x the
// dtype's scale) cycles, in dense-rate units so that every flavour and every warp group share one
// pipe; the op's flops / (2 m n k) instructions take issue_warps x warp_size thread issues each
// from the SM's issue slots; the result is ready latency_cycles after the later of the two.
double time_mma(Sm& sm, const core::SmSpec& spec, const core::TileOp& op, core::DType dtype, double now);

}  // namespace attnsim::engine
