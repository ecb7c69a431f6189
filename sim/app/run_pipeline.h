// One simulation point end to end: workload + device -> tile program -> engine -> RunResult
// (plus functional mode when asked). What `attnsim run`, `sweep` and `check` share.
#pragma once

#include <atomic>

#include "sim/app/run_estimate.h"
#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/core/workload.h"
#include "sim/engine/engine.h"

namespace attnsim::app {

struct RunOptions {
  engine::EngineOptions engine;
  // Resource guard: a run whose estimated peak memory (estimate_run) exceeds this is refused
  // with a ConfigError at "--max-memory" quoting the estimate. 0 = no limit.
  core::Bytes max_memory_bytes = default_max_memory_bytes();
  // Set (by another thread): the run stops with app::Interrupted at the engine's next progress
  // report or functional mode's next row. Null: never.
  const std::atomic<bool>* interrupt = nullptr;
};

// Throws core::ConfigError for an impossible workload or one over options.max_memory_bytes, core::SimError if the engine fails,
// app::Interrupted when options.interrupt is set.
core::RunResult run_workload(const core::Workload& workload, const core::DeviceSpec& device,
                             const RunOptions& options = {});

}  // namespace attnsim::app
