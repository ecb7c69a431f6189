// What a simulation reports: metrics named after Nsight Compute (base units), per-kernel
// results, per-tensor bytes per memory level, and sampled time series. Plain data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/io_counts.h"
#include "sim/core/launch_totals.h"
#include "sim/core/workload.h"

namespace attnsim::core {

struct Metric {
  std::string name;   // e.g. "dram__bytes_read.sum"
  double value = 0;
};
using Metrics = std::vector<Metric>;  // in a fixed order; names unique

const Metric* find_metric(const Metrics& m, std::string_view name);
void set_metric(Metrics& m, std::string_view name, double value);  // replace or append

// Per tensor, bytes at each memory level. Levels: "dram", "lts" (L2), "l1" (L1/shared, global
// loads that hit or fill it), "smem" (shared-memory reads/writes by the tile ops).
struct LevelTraffic {
  TensorTraffic dram;
  TensorTraffic lts;
  TensorTraffic l1;
  TensorTraffic smem;
  LevelTraffic& operator+=(const LevelTraffic& o) {
    dram += o.dram;
    lts += o.lts;
    l1 += o.l1;
    smem += o.smem;
    return *this;
  }
};

// Samples every `period_ns`; each column has one value per sample.
struct TimeSeries {
  double period_ns = 0;
  std::vector<std::string> names;             // e.g. "time_ns", "dram_gbps", "lts_gbps", "active_warps_pct"
  std::vector<std::vector<double>> columns;   // columns[i] belongs to names[i]
};

struct KernelResult {
  std::string name;
  // The engine's typed totals (engine::simulate fills them); a result read back from a file has
  // only `metrics`.
  LaunchTotals totals;
  // The named metrics: io::launch_metrics of `totals` (io::name_launch_metrics, called where
  // the engine's results leave it: app::run_workload), then the derived ones.
  Metrics metrics;
  std::string occupancy_limiter;  // the binding occupancy limit: "registers", "shared_mem", "warps", "blocks"
  LevelTraffic tensors;
  TimeSeries series;
};

struct RunResult {
  Workload workload;            // resolved
  std::string device_name;
  std::vector<KernelResult> kernels;
  Metrics metrics;              // totals over kernels (sums of bytes and time, max/avg where noted)
  LevelTraffic tensors;         // totals over kernels
  std::optional<double> functional_max_rel_error;  // set when workload.functional
  std::optional<double> functional_rmse;           // O against exact attention on the unquantized inputs
  double wall_seconds = 0;      // host time the simulation took (not part of determinism checks)
};

}  // namespace attnsim::core
