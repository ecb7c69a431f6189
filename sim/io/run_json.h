// `attnsim run --json`: one RunResult as one JSON object (workload, device, kernels, metrics,
// tensors, functional). Key order is fixed; numbers exact. No parsing of JSON back.
#pragma once

#include <ostream>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"

namespace attnsim::io {

// Writes
//   {"workload": {resolved keys}, "device": {name + key numbers},
//    "kernels": [{"name": .., "metrics": {..}, "tensors": {..}}, ..],
//    "metrics": {totals}, "tensors": {"Q": {"dram": {"read": R, "write": W}, "lts": .., "l1": ..,
//    "smem": ..}, ..}, "functional": {"max_rel_error": E, "rmse": R}}
// Tensors with no traffic at any level are left out; "functional" only when the run has it.
void write_run_json(const core::RunResult& result, const core::DeviceSpec& device, std::ostream& out);

}  // namespace attnsim::io
