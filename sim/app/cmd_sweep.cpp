// `attnsim sweep FILE.yaml --out FILE.h5 [-j N] [--resume] [--shard I/N]`: expands the sweep,
// runs every point (app::run_workload) on N threads and writes the HDF5 results file.
#include <unistd.h>

#include <iostream>
#include <thread>

#include "sim/app/cli_common.h"
#include "sim/app/command_line.h"
#include "sim/app/commands.h"
#include "sim/app/run_pipeline.h"
#include "sim/app/sweep_runner.h"
#include "sim/config/sweep_loader.h"
#include "sim/core/errors.h"

namespace attnsim::app {

namespace {

const char* const kUsage =
    "attnsim sweep FILE.yaml --out FILE.h5 [-j N] [--resume] [--shard I/N]\n\n"
    "Runs every point of a sweep file (see docs/hdf5-schema.md and README) and writes one HDF5 file:\n"
    "a table with one row per point (status ok / impossible / error) and a group per point.\n"
    "Finished points are journaled in FILE.h5.partial/ as they complete; after a crash,\n"
    "--resume continues where the sweep stopped. --shard I/N runs the points with index % N == I.";

void parse_shard(const std::string& s, SweepRunOptions& o) {
  const auto slash = s.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t a = 0, b = 0;
    o.shard_index = std::stoull(s.substr(0, slash), &a);
    o.shard_count = std::stoull(s.substr(slash + 1), &b);
    if (a != slash || b != s.size() - slash - 1 || o.shard_count == 0 || o.shard_index >= o.shard_count)
      throw std::invalid_argument("range");
  } catch (const std::exception&) {
    throw core::ConfigError(core::ConfigProblem{"", 0, "--shard", "expected I/N with 0 <= I < N, got '" + s + "'"});
  }
}

}  // namespace

int cmd_sweep(const Args& args, std::ostream& out) {
  std::string file, shard;
  SweepRunOptions o;
  int jobs = 0;
  po::options_description desc("options");
  desc.add_options()
      ("file", po::value<std::string>(&file)->required(), "sweep YAML file")
      ("out", po::value<std::string>(&o.out_path)->required(), "output HDF5 file")
      ("jobs,j", po::value<int>(&jobs)->default_value(0), "points run in parallel (0: the cores available)")
      ("resume", po::bool_switch(&o.resume), "continue an interrupted sweep (skips finished points)")
      ("shard", po::value<std::string>(&shard), "run only the points with index % N == I (I/N)");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse_options(args, kUsage, desc, vm, out, &pos)) return 0;
  if (jobs < 0) throw core::ConfigError(core::ConfigProblem{"", 0, "-j", "must not be negative"});
  o.jobs = jobs > 0 ? static_cast<unsigned>(jobs) : std::max(1u, std::thread::hardware_concurrency());
  if (!shard.empty()) parse_shard(shard, o);
  o.command_line = command_line("sweep", args);
  o.progress = &std::cerr;
  o.progress_is_terminal = ::isatty(STDERR_FILENO) != 0;

  const config::SweepSpec spec = config::SweepLoader::load_file(file);
  SweepRunner runner(spec, o, [](const core::Workload& w, const core::DeviceSpec& d) { return run_workload(w, d); });
  const SweepSummary s = runner.run();
  out << "sweep " << (spec.name.empty() ? file : spec.name) << ": " << s.total << " points";
  if (o.shard_count > 1) out << " (shard " << o.shard_index << "/" << o.shard_count << ")";
  out << ": " << s.ok << " ok, " << s.impossible << " impossible, " << s.error << " error";
  if (s.resumed) out << " (" << s.resumed << " from the interrupted run)";
  out << "\nwrote " << o.out_path << "\n";
  return s.error ? 3 : 0;
}

}  // namespace attnsim::app
