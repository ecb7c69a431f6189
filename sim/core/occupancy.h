// The CUDA occupancy rules (CUDA Programming Guide, "Occupancy"; cuda_occupancy.h):
// resident CTAs per SM from threads/warps, registers, shared memory and the block limit.
#pragma once

#include <optional>
#include <string>

#include "sim/core/device_spec.h"

namespace attnsim::core {

struct OccupancyInput {
  std::uint32_t threads_per_block = 0;
  std::uint32_t regs_per_thread = 0;
  Bytes smem_per_block = 0;               // static + dynamic, without the reserved 1 KiB
  std::optional<Bytes> carveout_bytes;    // shared-memory carve-out; default: the driver's choice (occupancy.cpp)
};

struct OccupancyResult {
  std::uint32_t limit_blocks = 0;       // launch__occupancy_limit_blocks
  std::uint32_t limit_registers = 0;    // launch__occupancy_limit_registers
  std::uint32_t limit_shared_mem = 0;   // launch__occupancy_limit_shared_mem
  std::uint32_t limit_warps = 0;        // launch__occupancy_limit_warps
  std::uint32_t active_blocks = 0;      // min of the four
  std::uint32_t active_warps = 0;
  double max_warps_pct = 0;             // sm__maximum_warps_per_active_cycle_pct
  Bytes carveout_bytes = 0;             // the carve-out used
  std::string limiter;                  // "blocks", "registers", "shared_mem", "warps"
};

// Throws ConfigError when the block cannot launch at all (too many threads, registers or
// shared memory for one SM).
OccupancyResult compute_occupancy(const SmSpec& sm, const OccupancyInput& in);

}  // namespace attnsim::core
