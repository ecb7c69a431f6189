// `attnsim sweep FILE --dry-run`: what a sweep would run, point by point, without running it:
// each point's keys, whether it is possible (and why not), and what run_estimate expects it to
// cost (tile ops, the engine's work; CTAs; peak host memory against the memory guard's limit).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/app/run_estimate.h"
#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_spec.h"
#include "sim/core/types.h"

namespace attnsim::app {

struct SweepPlanOptions {
  std::string file;                   // for the heading
  std::uint64_t shard_index = 0;      // the points with index % shard_count == shard_index
  std::uint64_t shard_count = 1;
  core::Bytes max_memory_bytes = 0;   // the guard's limit (0: none); a point over it is impossible
};

// One point of the plan.
struct PlanRow {
  std::uint64_t index = 0;
  std::vector<std::pair<std::string, config::SweepValue>> params;  // axes, derived values, "device"
  bool ok = false;     // false: the sweep records the point as impossible, for `reason`
  std::string reason;
  RunEstimate estimate;  // ok points
};

struct SweepPlan {
  std::uint64_t total = 0;    // points of the sweep (all shards)
  std::vector<PlanRow> rows;  // the shard's points in index order
};

// The plan of the sweep `expander` expands (its constructor has checked the sweep, as `attnsim
// sweep` does before anything runs).
SweepPlan plan_sweep(const config::SweepExpander& expander, const SweepPlanOptions& options);

// Prints the plan of `spec` (expanded by `expander`): a heading, one row per point, the totals.
// Returns the number of points listed.
std::uint64_t print_sweep_plan(const config::SweepSpec& spec, const config::SweepExpander& expander,
                               const SweepPlanOptions& options, std::ostream& out);

}  // namespace attnsim::app
