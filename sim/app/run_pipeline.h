// One simulation point end to end: workload + device -> tile program -> engine -> RunResult
// (plus functional mode when asked). What `attnsim run`, `sweep` and `check` share.
#pragma once

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/core/workload.h"
#include "sim/engine/engine.h"

namespace attnsim::app {

struct RunOptions {
  engine::EngineOptions engine;
};

// Throws core::ConfigError for an impossible workload, core::SimError if the engine fails.
core::RunResult run_workload(const core::Workload& workload, const core::DeviceSpec& device,
                             const RunOptions& options = {});

}  // namespace attnsim::app
