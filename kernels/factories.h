// Factories of the built-in kernels, one per source file; listed in registry.cpp.
#pragma once

#include "sim/core/device_spec.h"
#include "sim/core/tile_program.h"

namespace attnsim::kernels {

core::TileProgram make_standard(const core::Workload&, const core::DeviceSpec&);
core::TileProgram make_flash1(const core::Workload&, const core::DeviceSpec&);
core::TileProgram make_flash2(const core::Workload&, const core::DeviceSpec&);
core::TileProgram make_flash3(const core::Workload&, const core::DeviceSpec&);
core::TileProgram make_flash_decode(const core::Workload&, const core::DeviceSpec&);
core::TileProgram make_pointer_chase(const core::Workload&, const core::DeviceSpec&);
core::TileProgram make_stream_read(const core::Workload&, const core::DeviceSpec&);
core::TileProgram make_stream_copy(const core::Workload&, const core::DeviceSpec&);

}  // namespace attnsim::kernels
