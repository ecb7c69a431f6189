// Placement of a launch on the device and the CTA counter of the grid.
#include "sim/engine/cta_scheduler.h"

#include <algorithm>
#include <string>

#include "sim/core/errors.h"

namespace attnsim::engine {

namespace {

core::OccupancyResult place(const core::DeviceSpec& d, const core::LaunchShape& shape) {
  if (d.kind == core::DeviceKind::kScratchpad) {
    const core::Bytes smem = shape.smem_per_cta();
    const core::Bytes sram = d.scratchpad.sram_bytes_per_core;
    if (smem > sram)
      throw core::ConfigError(core::ConfigProblem{
          d.source_file, 0, "smem_per_cta",
          "a program instance needs " + std::to_string(smem) + " bytes of SRAM but a core of '" + d.name +
              "' has " + std::to_string(sram)});
    core::OccupancyResult r;
    r.active_blocks = smem ? static_cast<std::uint32_t>(std::max<core::Bytes>(1, sram / smem)) : 1;
    r.active_blocks = std::min(r.active_blocks, std::max<std::uint32_t>(1, d.sm.max_blocks_per_sm));
    r.limit_blocks = r.limit_shared_mem = r.active_blocks;
    r.limit_registers = r.limit_warps = r.active_blocks;
    r.active_warps = r.active_blocks * shape.warps_per_cta(d.sm.warp_size);
    r.max_warps_pct = d.sm.max_warps_per_sm ? 100.0 * r.active_warps / d.sm.max_warps_per_sm : 0;
    r.limiter = "shared_mem";
    return r;
  }
  core::OccupancyInput in;
  in.threads_per_block = shape.threads_per_cta;
  in.regs_per_thread = shape.regs_per_thread;
  in.smem_per_block = shape.smem_per_cta();
  core::OccupancyResult r = core::compute_occupancy(d.sm, in);
  if (r.active_blocks == 0)
    throw core::ConfigError(core::ConfigProblem{d.source_file, 0, "launch", "no CTA of this launch fits on an SM"});
  return r;
}

}  // namespace

CtaScheduler::CtaScheduler(const core::DeviceSpec& device, const core::LaunchShape& shape)
    : occupancy_(place(device, shape)), slots_per_sm_(occupancy_.active_blocks), num_ctas_(shape.num_ctas()),
      cluster_size_(std::max<std::uint32_t>(1, shape.cluster_size)) {
  if (cluster_size_ == 1) return;
  const std::uint64_t slots = static_cast<std::uint64_t>(slots_per_sm_) * device.sm.count;
  std::string why;
  if (cluster_size_ > 8) why = "cluster_size " + std::to_string(cluster_size_) + " is over the portable limit 8";
  else if (num_ctas_ % cluster_size_ != 0)
    why = "the grid of " + std::to_string(num_ctas_) + " CTAs is not a multiple of cluster_size " +
          std::to_string(cluster_size_);
  else if (slots < cluster_size_)
    why = "a cluster of " + std::to_string(cluster_size_) + " CTAs does not fit on the device's " +
          std::to_string(slots) + " CTA slots";
  if (!why.empty()) throw core::ConfigError(core::ConfigProblem{device.source_file, 0, "launch", why});
}

}  // namespace attnsim::engine
