// The load-credit allowances, chunk and resume sizes of one launch from the device spec.
#include "sim/engine/load_credits.h"

#include <algorithm>

namespace attnsim::engine {

LoadCredits::LoadCredits(const core::DeviceSpec& device, std::uint32_t warps_per_cta, std::uint32_t slots_per_sm,
                         core::Bytes line, core::Bytes unit, core::Bytes granule_bytes, bool block_model,
                         core::Bytes kernel_per_warp)
    : slots_per_sm_(slots_per_sm) {
  if (device.kind == core::DeviceKind::kGpu) {
    core::Bytes per_warp = device.sm.max_inflight_bytes_per_warp;
    if (kernel_per_warp && (per_warp == 0 || kernel_per_warp < per_warp)) per_warp = kernel_per_warp;
    if (per_warp) cta_credit_ = std::max<core::Bytes>(line, per_warp * warps_per_cta);
    if (device.sm.max_inflight_bytes_per_sm)
      sm_credit_ = std::max<core::Bytes>(line, device.sm.max_inflight_bytes_per_sm);
  }
  const core::Bytes smallest = cta_credit_ && sm_credit_ ? std::min(cta_credit_, sm_credit_)
                                                         : std::max(cta_credit_, sm_credit_);
  dither_ = block_model && cta_credit_ > 0;
  if (dither_) {  // the line model's credit chunk, in DRAM requests
    const core::Bytes line_chunk = std::max<core::Bytes>(line, smallest / 4);
    const core::Bytes granule = std::max<core::Bytes>(1, granule_bytes);
    credit_group_ = static_cast<std::uint32_t>((line_chunk + granule - 1) / granule);
  }
  // Block model: credits come back per tracking unit at least (fewer events).
  const core::Bytes grain = std::max<core::Bytes>(line, unit);
  chunk_bytes_ = smallest ? std::max<core::Bytes>(grain, smallest / 4) : std::numeric_limits<core::Bytes>::max();
  // A CTA out of credits resumes once kResumeLines lines of room are back (credit_need), so
  // that returned credits coalesce instead of fragmenting into one-line chunks. Never more than
  // the smallest allowance (which is at least a line).
  resume_bytes_ = smallest ? std::min(std::max<core::Bytes>(line, smallest / 4), kResumeLines * line)
                           : std::numeric_limits<core::Bytes>::max();
}

}  // namespace attnsim::engine
