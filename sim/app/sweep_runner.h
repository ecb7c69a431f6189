// Runs a sweep's points in parallel into one HDF5 results file: point journal for crash safety
// and --resume, shards, progress on a stream, deterministic output whatever the thread count.
// Simulation of a point is injected (app::run_workload in production, a fake in tests).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>

#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_spec.h"
#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/core/workload.h"
#include "sim/io/point_record.h"

namespace attnsim::app {

class RemotePointPool;

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
  // Set (by a SIGINT handler) to stop: points in flight finish and are journaled, a snapshot
  // (complete = 0) is written, and run() throws SweepInterrupted. Null: never interrupted.
  const std::atomic<bool>* interrupt = nullptr;
  // Other processes that run points for this one (MPI worker ranks); null: this process only.
  RemotePointPool* remote = nullptr;
};

// run() stopped on `interrupt` after making every finished point durable (exit 130 in the CLI).
class SweepInterrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SweepSummary {
  std::uint64_t total = 0;      // points in this shard
  std::uint64_t resumed = 0;    // taken from an earlier run
  std::uint64_t ok = 0;
  std::uint64_t impossible = 0;
  std::uint64_t error = 0;
};

using PointRunner = std::function<core::RunResult(const core::Workload&, const core::DeviceSpec&)>;

// One point's record: impossible points are not run; a ConfigError while running makes the point
// "impossible", a SimError "error"; any other exception propagates. Host wall time is zeroed.
io::PointRecord run_sweep_point(const config::SweepPoint& point, const PointRunner& run_point);

// The points in the order the runner hands them out: longest first by the engine-event estimate
// of run_estimate (LPT scheduling: the last points to finish are short, so -j N threads or ranks
// end together); ties and unestimable points (impossible: cost 0) keep sweep order. The results
// file is ordered by point index whatever the order of execution.
// Returns each point's estimated cost by point index (the progress report's ETA weighs by it).
double estimated_cost(const config::SweepPoint& point);
std::map<std::uint64_t, double> order_longest_first(std::vector<const config::SweepPoint*>& todo);

// Seconds left for the progress report, `secs` after the start: the points' estimated costs
// still to run over the cost finished per second so far (points run longest first, so a count
// of points finished would predict the cheap ones' time from the costly ones'); by the point
// count where the estimates are zero (nothing estimable finished yet). 0 when nothing finished.
double sweep_eta_seconds(double secs, std::uint64_t points_done, std::uint64_t points_left, double cost_done,
                         double cost_left);

class SweepRunner {
 public:
  SweepRunner(const config::SweepSpec& spec, SweepRunOptions options, PointRunner run_point);

  // Throws core::ConfigError for a bad sweep (before anything is written) or a leftover journal
  // without --resume. Any other exception from a point stops the sweep and leaves the journal
  // ("<out>.partial/") for --resume. With options.remote, also tells the workers whether the
  // sweep starts, hands them points and stops them at the end (or on any failure).
  SweepSummary run();

 private:
  const config::SweepSpec& spec_;
  SweepRunOptions options_;
  PointRunner run_point_;
};

}  // namespace attnsim::app
