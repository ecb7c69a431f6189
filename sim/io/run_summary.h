// The human-readable report of one run: a summary for people (time, TFLOP/s, DRAM GB/s, each
// with its % of peak, what bounds the run, occupancy and its limiter, the block-size rule), then
// the workload line, metrics per kernel and totals with their units, and bytes per tensor per
// memory level. Text only; machines use run_json.h or HDF5.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"

namespace attnsim::io {

// `block_rule`: how the kernel's block sizes were set (kernels::block_size_rule), or "".
void print_run_summary(const core::RunResult& result, const core::DeviceSpec& device, std::ostream& out,
                       std::string_view block_rule = "");

// The unit of a metric, from its name: "ns", "B", "B/s", "%", "cycles", "FLOP", "TFLOP/s",
// "GB/s", or "" for plain counts.
std::string metric_unit(std::string_view name);

// "12.3 µs", "1.23 ms", "845 ns": a duration in ns with three significant digits and a unit.
std::string format_duration_ns(double ns);

}  // namespace attnsim::io
