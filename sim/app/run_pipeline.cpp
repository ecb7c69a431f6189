#include "sim/app/run_pipeline.h"

#include <chrono>
#include <string>

#include "kernels/functional.h"
#include "kernels/registry.h"
#include "sim/app/command_context.h"
#include "sim/core/derived_metrics.h"
#include "sim/core/errors.h"
#include "sim/io/launch_metrics.h"

namespace attnsim::app {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Totals over launches: sums for counters (".sum" and attnsim__ counts), time-weighted means
// for percentages; per-launch shape metrics (launch__*) stay per kernel.
core::Metrics total_metrics(const std::vector<core::KernelResult>& kernels) {
  core::Metrics totals;
  double total_time = 0;
  for (const auto& k : kernels)
    if (const auto* t = core::find_metric(k.metrics, "gpu__time_duration.sum")) total_time += t->value;
  for (const auto& k : kernels) {
    const auto* t = core::find_metric(k.metrics, "gpu__time_duration.sum");
    double weight = (t && total_time > 0) ? t->value / total_time : 1.0 / kernels.size();
    for (const auto& m : k.metrics) {
      if (m.name.rfind("launch__", 0) == 0 || io::is_sampling_metric(m.name)) continue;
      double add = 0;
      if (ends_with(m.name, ".pct") || ends_with(m.name, "_pct")) {
        add = m.value * weight;
      } else if (ends_with(m.name, ".sum") || m.name.rfind("attnsim__", 0) == 0) {
        add = m.value;
      } else {
        continue;  // rates and other derived values are recomputed below
      }
      const auto* cur = core::find_metric(totals, m.name);
      core::set_metric(totals, m.name, (cur ? cur->value : 0.0) + add);
    }
  }
  if (total_time > 0) {
    const auto* rd = core::find_metric(totals, "dram__bytes_read.sum");
    const auto* wr = core::find_metric(totals, "dram__bytes_write.sum");
    double bytes = (rd ? rd->value : 0) + (wr ? wr->value : 0);
    core::set_metric(totals, "dram__bytes.sum.per_second", bytes / (total_time * 1e-9));
  }
  core::set_metric(totals, "attnsim__launches", static_cast<double>(kernels.size()));
  io::total_sampling_metrics(kernels, totals);
  return totals;
}

}  // namespace

core::RunResult run_workload(const core::Workload& workload, const core::DeviceSpec& device,
                             const RunOptions& options) {
  auto start = std::chrono::steady_clock::now();
  core::TileProgram program = kernels::make_program(workload, device);
  if (options.max_memory_bytes > 0) {
    const RunEstimate estimate = estimate_run(program, device);
    if (estimate.peak_memory_bytes() > static_cast<double>(options.max_memory_bytes))
      throw core::ConfigError(core::ConfigProblem{
          "", 0, "--max-memory",
          "refusing to run: " + estimate.describe() + " exceeds the limit of " +
              format_bytes(static_cast<double>(options.max_memory_bytes)) + " (" +
              std::to_string(options.max_memory_bytes) +
              " bytes); shrink the workload or device, or raise --max-memory"});
  }
  core::RunResult result;
  result.workload = program.workload;
  engine::EngineOptions engine_base = options.engine;
  engine_base.sampled = program.workload.sim_mode == core::SimMode::kSampled;  // sim.mode
  engine_base.sampled_min_ops = program.workload.sim_min_ops;                 // sim.min_ops
  result.device_name = device.name;
  if (options.interrupt) {
    engine::EngineOptions engine_options = engine_base;
    engine_options.progress = [&options](const engine::LaunchProgress& p) {
      throw_if_interrupted(options.interrupt);
      if (options.engine.progress) options.engine.progress(p);
    };
    result.kernels = engine::simulate(device, program, engine_options);
  } else {
    result.kernels = engine::simulate(device, program, engine_base);
  }
  io::name_launch_metrics(result.kernels);  // the engine's typed totals get their names here
  result.metrics = total_metrics(result.kernels);
  // TFLOP/s, GB/s, % of peak and busy % per launch and for the run (from the summed counters).
  for (auto& k : result.kernels) core::add_derived_metrics(k.metrics, device);
  core::add_derived_metrics(result.metrics, device);
  for (const auto& k : result.kernels) result.tensors += k.tensors;
  if (program.workload.functional) {
    // The schedule on numbers, stored in the workload's dtype (rounding emulated).
    const kernels::FunctionalErrors errors =
        kernels::functional_errors(program.workload, kernels::storage_precision(program.workload.dtype),
                                   [&options] { throw_if_interrupted(options.interrupt); });
    result.functional_max_rel_error = errors.max_rel_error;
    result.functional_rmse = errors.rmse;
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace attnsim::app
