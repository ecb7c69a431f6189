// One SM (or scratchpad core): its pipes and issue slots as bandwidth servers, the global-load
// bytes its resident CTAs hold in flight, and its resident warps over time. Leaves out warp
// scheduling inside a CTA and per-warp register files; the pipes are shared by all resident CTAs.
#pragma once

#include <cstdint>

#include "sim/core/device_spec.h"
#include "sim/core/types.h"
#include "sim/engine/bandwidth_server.h"

namespace attnsim::engine {

struct Sm {
  BandwidthServer lsu, tensor, fp32, sfu, smem, issue;
  core::Bytes inflight = 0;
  std::uint32_t waiting = 0;         // slots of this SM waiting for load credits
  std::uint64_t waiting_mask = 0;    // which (bit k: the SM's k-th slot; up to 64 slots)
  std::uint32_t warps = 0;
  double warps_integral = 0;  // resident warps x cycles
  double active_cycles = 0;   // cycles with at least one resident CTA
  double last_change = 0;

  // An idle SM with the device's pipe rates (a rate of 0 in the spec: unlimited).
  static Sm from_spec(const core::DeviceSpec& device);
  // Sets the resident warps from `now` on, integrating the previous count up to `now`.
  void set_warps(std::uint32_t count, double now) {
    const double dt = now - last_change;
    warps_integral += warps * dt;
    if (warps > 0) active_cycles += dt;
    last_change = now;
    warps = count;
  }
};

}  // namespace attnsim::engine
