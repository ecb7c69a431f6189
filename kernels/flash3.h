// FlashAttention-3's forward choices on sm_90 (tile sizes, ping-pong, register budgets, shared
// memory) and the resolved schedule the timing stream and the functional mode share.
#pragma once

#include <cstdint>

#include "sim/core/device_spec.h"
#include "sim/core/workload.h"

namespace attnsim::kernels {

// hopper/tile_size.h, tile_size_fwd_sm90: {kBlockM, kBlockN, MmaPV_is_RS, IntraWGOverlap}.
struct Flash3Tile {
  std::uint64_t block_m, block_n;
  bool mma_pv_rs, intrawg_overlap;
};
Flash3Tile flash3_default_tile(std::uint64_t head_dim, core::DType dtype, bool causal);
// mainloop_fwd_sm90_tma_gmma_ws.hpp, UseSchedulerBarrier: ping-pong of the consumer warp groups.
bool flash3_default_pingpong(std::uint32_t consumer_warpgroups, bool intrawg_overlap, std::uint64_t head_dim,
                             core::DType dtype);
// flash_fwd_kernel_sm90.h: setmaxnreg budgets per thread of the producer and consumer warp groups.
struct Flash3Registers {
  std::uint32_t producer, consumer;
};
Flash3Registers flash3_registers(std::uint32_t consumer_warpgroups);

// Bytes per value of O (FP8 inputs write O in bf16) and the CTA's shared memory.
core::Bytes flash3_out_bytes(core::DType dtype);
core::Bytes flash3_smem(const core::Workload& w, bool mma_pv_rs);

// The workload with FA-3's defaults filled in; throws core::ConfigError naming the key.
core::Workload flash3_resolve(const core::Workload& in, const core::DeviceSpec& device);

// What one CTA's stream needs of a resolved workload.
struct Flash3Schedule {
  std::uint64_t seq_q = 0, seq_kv = 0, head_dim = 0, block_n = 0;
  std::uint32_t consumer_warpgroups = 1, stages = 2;
  bool pingpong = false, intrawg_overlap = false, causal = false, transpose_v = false;
  core::Bytes value_bytes = 2, out_bytes = 2;
};
Flash3Schedule flash3_schedule(const core::Workload& resolved);

}  // namespace attnsim::kernels
