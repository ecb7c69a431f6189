// The event-driven engine: executes a TileProgram's launches on a device and reports bytes,
// time and occupancy per launch. Launches run back to back; the L2 is written back and
// invalidated between launches (as Nsight Compute does before every profiled kernel).
#pragma once

#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/core/tile_program.h"

namespace attnsim::engine {

struct EngineOptions {
  double sample_period_ns = 0;            // 0 = automatic (about 256 samples per launch)
  std::uint64_t stall_limit_events = 50'000'000;  // progress guard: events without a retired op
};

// Throws core::SimError if the simulation cannot make progress, core::ConfigError if a
// launch cannot be placed on the device (e.g. a CTA needs more shared memory than an SM has).
std::vector<core::KernelResult> simulate(const core::DeviceSpec& device,
                                         const core::TileProgram& program,
                                         const EngineOptions& options = {});

}  // namespace attnsim::engine
