// Runs a sweep's points in parallel into one HDF5 results file: point journal for crash safety
// and --resume, shards, progress on a stream, deterministic output whatever the thread count.
// Simulation of a point is injected (app::run_workload in production, a fake in tests).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "sim/config/sweep_spec.h"
#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/core/workload.h"

namespace attnsim::app {

struct SweepRunOptions {
  std::string out_path;
  unsigned jobs = 1;
  bool resume = false;
  std::uint64_t shard_index = 0;
  std::uint64_t shard_count = 1;
  std::string command_line;           // provenance
  std::ostream* progress = nullptr;   // progress reports (stderr in the CLI); null = silent
  bool progress_is_terminal = false;  // true: one redrawn bar line; false: plain lines
  double snapshot_seconds = 2.0;      // rewrite the output file with the points so far this often
};

struct SweepSummary {
  std::uint64_t total = 0;      // points in this shard
  std::uint64_t resumed = 0;    // taken from an earlier run
  std::uint64_t ok = 0;
  std::uint64_t impossible = 0;
  std::uint64_t error = 0;
};

using PointRunner = std::function<core::RunResult(const core::Workload&, const core::DeviceSpec&)>;

class SweepRunner {
 public:
  SweepRunner(const config::SweepSpec& spec, SweepRunOptions options, PointRunner run_point);

  // Throws core::ConfigError for a bad sweep (before anything is written) or a leftover journal
  // without --resume. Any other exception from a point stops the sweep and leaves the journal
  // ("<out>.partial/") for --resume.
  SweepSummary run();

 private:
  const config::SweepSpec& spec_;
  SweepRunOptions options_;
  PointRunner run_point_;
};

}  // namespace attnsim::app
