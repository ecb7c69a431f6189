// The human-readable report of one run: workload line, metrics per kernel and totals, and
// bytes per tensor per memory level. Text only; machines use run_json.h or HDF5.
#pragma once

#include <ostream>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"

namespace attnsim::io {

void print_run_summary(const core::RunResult& result, const core::DeviceSpec& device, std::ostream& out);

}  // namespace attnsim::io
