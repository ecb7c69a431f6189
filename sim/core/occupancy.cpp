#include "sim/core/occupancy.h"

#include <algorithm>
#include <array>
#include <limits>

#include "sim/core/errors.h"

// Rules as stated in the CUDA Programming Guide ("Occupancy Calculator") and by
// cuda_occupancy.h for compute capability 7.0 and later:
// - warps: floor(min(max_warps, max_threads/warp_size) / warps_per_block);
// - registers: each warp gets ceil(regs*warp_size / unit)*unit registers, allocated inside one
//   of the SM's sub-partitions (schedulers): warps per sub-partition =
//   floor(registers_per_sm / schedulers / per_warp), limit = floor(that*schedulers / warps_per_block);
// - shared memory: each block allocates ceil((smem + reserve) / unit)*unit bytes of the carve-out.
// The default carve-out (no carve-out requested) is the driver's choice, which NVIDIA does not
// publish (cuda_occupancy.h assumes the largest). attnsim uses a rule fitted to the 27 launches
// of tests/data/reference/kernels.csv (each reports launch__shared_mem_config_size), which it
// reproduces exactly, carve-out and all four limits (tests/core/occupancy_test.cpp):
//   keep  = min(warp, register, block limits) * alloc   (never lower occupancy below them)
//   slots = min(warp limit, block limit)                 (threads and block slots only)
//   want  = max(keep, min((slots + 1) * alloc, shared_mem_per_sm / 2), alloc)
//   carve-out = the smallest supported carve-out >= want (the largest if none is).
// So beyond what the other limits need, the driver sizes for one block more than the warp and
// block slots allow, up to half the SM's shared memory (cuda_occupancy.h's SHAREDMEM_CARVEOUT_HALF,
// rounded up to a supported size). Evidence: a kernel without shared memory, 4 warps, register
// limit 10 or 6, gets 32 KiB (17 x 1 KiB), not the 8-16 KiB its occupancy needs; FlashAttention-2
// blocks of 48 and 64 KiB (register limit 2) both get 132 KiB (the half-SM term), although
// 100 KiB holds two 49 KiB blocks. A variant sizing slots * (alloc + reserve) fits the same 27
// launches; nothing measured here separates the two.

namespace attnsim::core {

namespace {

ConfigError launch_error(const std::string& key, const std::string& what) {
  return ConfigError(ConfigProblem{"", 0, key, what});
}

std::uint32_t clamp_limit(std::uint64_t v) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

OccupancyResult compute_occupancy(const SmSpec& sm, const OccupancyInput& in) {
  if (in.threads_per_block == 0) throw launch_error("threads", "a block needs at least one thread");
  if (in.threads_per_block > sm.max_threads_per_block)
    throw launch_error("threads", std::to_string(in.threads_per_block) + " threads per block exceed the device limit of " +
                                      std::to_string(sm.max_threads_per_block));
  if (in.regs_per_thread > sm.max_registers_per_thread)
    throw launch_error("regs", std::to_string(in.regs_per_thread) + " registers per thread exceed the device limit of " +
                                   std::to_string(sm.max_registers_per_thread));
  if (in.smem_per_block > sm.shared_mem_per_block_optin_bytes)
    throw launch_error("smem", std::to_string(in.smem_per_block) +
                                   " bytes of shared memory per block exceed the opt-in limit of " +
                                   std::to_string(sm.shared_mem_per_block_optin_bytes));
  if (sm.warp_size == 0 || sm.register_allocation_unit == 0 || sm.shared_mem_allocation_unit_bytes == 0 ||
      sm.schedulers_per_sm == 0)
    throw launch_error("sm", "warp_size, allocation units and schedulers_per_sm must be positive");

  OccupancyResult r;
  const std::uint64_t warps_per_block = ceil_div(in.threads_per_block, sm.warp_size);

  // Warps (and threads) per SM.
  const std::uint64_t max_warps = std::min<std::uint64_t>(sm.max_warps_per_sm, sm.max_threads_per_sm / sm.warp_size);
  r.limit_warps = clamp_limit(max_warps / warps_per_block);

  r.limit_blocks = sm.max_blocks_per_sm;

  // Registers, allocated per warp within a sub-partition.
  const std::uint64_t unit = sm.register_allocation_unit;
  const std::uint64_t regs_per_warp = ceil_div(std::uint64_t{in.regs_per_thread} * sm.warp_size, unit) * unit;
  if (regs_per_warp == 0) {
    r.limit_registers = sm.max_blocks_per_sm;
  } else {
    // The hardware's per-block check assumes the block's warps spread over every sub-partition.
    const std::uint64_t warps_rounded = ceil_div(warps_per_block, sm.schedulers_per_sm) * sm.schedulers_per_sm;
    if (regs_per_warp * warps_rounded > sm.max_registers_per_block || regs_per_warp * warps_per_block > sm.max_registers_per_block)
      throw launch_error("regs", std::to_string(in.regs_per_thread) + " registers per thread x " +
                                     std::to_string(in.threads_per_block) +
                                     " threads exceed the registers available to one block (" +
                                     std::to_string(sm.max_registers_per_block) + ")");
    const std::uint64_t warps_per_partition = (sm.registers_per_sm / sm.schedulers_per_sm) / regs_per_warp;
    r.limit_registers = clamp_limit(warps_per_partition * sm.schedulers_per_sm / warps_per_block);
  }

  // Shared memory, including the per-block reserve, in allocation units.
  const std::uint64_t smem_unit = sm.shared_mem_allocation_unit_bytes;
  const Bytes smem_alloc = ceil_div(in.smem_per_block + sm.shared_mem_reserved_per_block_bytes, smem_unit) * smem_unit;
  auto smem_limit_for = [&](Bytes carveout) -> std::uint32_t {
    if (smem_alloc == 0) return sm.max_blocks_per_sm;
    return clamp_limit(carveout / smem_alloc);
  };
  // Smallest supported carve-out of at least `need` bytes (the largest usable if none is listed).
  auto carveout_at_least = [&](Bytes need) -> Bytes {
    for (Bytes c : sm.shared_mem_carveouts_bytes)
      if (c >= need && c <= sm.shared_mem_per_sm_bytes) return c;
    return sm.shared_mem_per_sm_bytes;
  };
  if (smem_alloc > sm.shared_mem_per_sm_bytes)
    throw launch_error("smem", "one block needs " + std::to_string(smem_alloc) +
                                   " bytes of shared memory (with the reserve) but an SM has " +
                                   std::to_string(sm.shared_mem_per_sm_bytes));

  Bytes carveout = 0;
  if (in.carveout_bytes) {
    if (*in.carveout_bytes > sm.shared_mem_per_sm_bytes)
      throw launch_error("carveout", "carve-out of " + std::to_string(*in.carveout_bytes) +
                                         " bytes exceeds the shared memory per SM (" +
                                         std::to_string(sm.shared_mem_per_sm_bytes) + ")");
    // A requested carve-out too small for one block is raised to one that fits (cuda_occupancy.h).
    carveout = *in.carveout_bytes >= smem_alloc ? *in.carveout_bytes : carveout_at_least(smem_alloc);
  } else {
    const std::uint64_t slots = std::min<std::uint64_t>(r.limit_warps, r.limit_blocks);
    const Bytes keep = smem_alloc * std::min<std::uint64_t>(slots, r.limit_registers);
    const Bytes headroom = std::min<Bytes>((slots + 1) * smem_alloc, sm.shared_mem_per_sm_bytes / 2);
    carveout = carveout_at_least(std::max({smem_alloc, keep, headroom}));
  }
  r.carveout_bytes = carveout;
  r.limit_shared_mem = smem_limit_for(carveout);

  // The smallest limit wins; ties are reported in this fixed order.
  const std::array<std::pair<std::uint32_t, const char*>, 4> limits = {{{r.limit_registers, "registers"},
                                                                        {r.limit_shared_mem, "shared_mem"},
                                                                        {r.limit_warps, "warps"},
                                                                        {r.limit_blocks, "blocks"}}};
  r.active_blocks = limits[0].first;
  r.limiter = limits[0].second;
  for (const auto& [v, name] : limits)
    if (v < r.active_blocks) {
      r.active_blocks = v;
      r.limiter = name;
    }
  r.active_warps = clamp_limit(std::uint64_t{r.active_blocks} * warps_per_block);
  r.max_warps_pct = sm.max_warps_per_sm ? 100.0 * r.active_warps / sm.max_warps_per_sm : 0.0;
  return r;
}

}  // namespace attnsim::core
