// The names of a launch's metrics: turns the engine's typed totals (core::LaunchTotals) into
// metrics named after Nsight Compute (dram__bytes_read.sum, gpu__time_duration.sum, ...) and
// attnsim__* counters, in the fixed order that `run --json` and the HDF5 files keep
// (docs/hdf5-schema.md). The derived metrics (core/derived_metrics.h) are added after these.
#pragma once

#include <string_view>

#include <vector>

#include "sim/core/launch_totals.h"
#include "sim/core/run_result.h"

namespace attnsim::io {

// The launch's metrics under their Nsight Compute / attnsim__ names.
core::Metrics launch_metrics(const core::LaunchTotals& t);

// Sets each kernel's `metrics` to launch_metrics(totals): what engine::simulate returns has
// typed totals only.
void name_launch_metrics(std::vector<core::KernelResult>& kernels);
// The run totals of attnsim__sim_mode (1 if any launch was sampled) and
// attnsim__sampled_fraction (over all launches), which are not sums; is_sampling_metric names them.
bool is_sampling_metric(std::string_view name);
void total_sampling_metrics(const std::vector<core::KernelResult>& kernels, core::Metrics& totals);

}  // namespace attnsim::io
