// The kernel registry: workload "kernel" name -> factory building the tile program.
// An explicit table (see registry.cpp), no static-initialisation macros.
#pragma once

#include <string>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/tile_program.h"

namespace attnsim::kernels {

using ProgramFactory = core::TileProgram (*)(const core::Workload&, const core::DeviceSpec&);

struct KernelEntry {
  const char* name;
  ProgramFactory make;
  const char* summary;
};

const std::vector<KernelEntry>& kernel_registry();

// Resolves defaults (block sizes, warps, stages, registers, shared memory) for the device and
// builds the launches. Throws core::ConfigError for an unknown kernel or an impossible
// workload (tiles that do not fit in shared memory, heads not divisible by kv_heads, ...).
core::TileProgram make_program(const core::Workload& workload, const core::DeviceSpec& device);

}  // namespace attnsim::kernels
