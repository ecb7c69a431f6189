// `attnsim sweep FILE.yaml --out FILE.h5 [-j N] [--resume] [--shard I/N]`: expands the sweep,
// runs every point (app::run_workload) on N threads and writes the HDF5 results file. Under
// mpirun (docs/distributed.md) rank 0 runs the sweep and hands points to the other ranks.
#include <unistd.h>

#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/app/cli_common.h"
#include "sim/app/output_path.h"
#include "sim/app/command_line.h"
#include "sim/app/commands.h"
#include "sim/app/mpi_session.h"
#include "sim/app/mpi_sweep_master.h"
#include "sim/app/mpi_sweep_worker.h"
#include "sim/app/run_pipeline.h"
#include "sim/app/sigint_flag.h"
#include "sim/app/sweep_plan.h"
#include "sim/app/sweep_runner.h"
#include "sim/config/sweep_loader.h"
#include "sim/core/errors.h"
#include "sim/io/durable_write.h"
#include "sim/io/point_journal.h"

namespace attnsim::app {

namespace {

const char* const kUsage =
    "attnsim sweep FILE.yaml --out FILE.h5 [-j N] [--resume] [--shard I/N] [--set KEY=VALUE]...\n"
    "       attnsim sweep FILE.yaml --dry-run [--shard I/N] [--set KEY=VALUE]...\n\n"
    "Runs every point of a sweep file (see docs/hdf5-schema.md and README) and writes one HDF5 file:\n"
    "a table with one row per point (status ok / impossible / error) and a group per point.\n"
    "--dry-run runs nothing and writes nothing: it lists the points, which are impossible and why, and\n"
    "each one's estimated tile ops, CTAs and peak memory (a point over the memory guard's limit,\n"
    "half the physical RAM, would be refused), then the totals.\n"
    "--set KEY=VALUE applies to every point, after the file's set: (e.g. --set sim.mode=sampled,\n"
    "--set device.l2.capacity_bytes=0); a key the sweep varies is bad input.\n"
    "Finished points are journaled in FILE.h5.partial/ as they complete; after a crash,\n"
    "--resume continues where the sweep stopped. --shard I/N runs the points with index % N == I.\n"
    "FILE.h5 may be a link (its target is replaced) or a device or FIFO (the file is written once at\n"
    "the end; the journal is then in $TMPDIR): docs/output-paths.md.\n"
    "Ctrl-C finishes the points in flight, writes a readable snapshot and exits 130 (a second one kills).\n"
    "Under mpirun -n K, rank 0 hands points to the other ranks and alone writes FILE.h5\n"
    "(-j then sets rank 0's threads, default 1; every other rank runs one point at a time;\n"
    "see docs/distributed.md).";

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

// Under mpirun, a rank's exit code other than 0 makes mpirun kill the job at once, so ranks end
// together: each waits here for all the others, and the rank that reports an error writes it
// before it waits. Otherwise a rank that left early could kill the reporting one before its
// message was out (seen: 4 of 40 runs of a 3-rank bad sweep printed nothing). Returns the exit
// code of the reported error (2 for a ConfigError), or `code`.
int end_together(const MpiSession& mpi, std::exception_ptr report, int code) {
  if (report) {
    code = report_error(std::cerr, "sweep", report);
    std::cerr.flush();
  }
  mpi.barrier();
  return code;
}

// Runs `body` on every rank; if any rank throws a ConfigError, every rank returns exit 2 together
// (rank 0 reports the error; other ranks report it only when rank 0 had none), so a bad sweep file
// never leaves some ranks waiting for others. In one process the error is simply rethrown.
template <typename F>
int agree_on_input(const MpiSession& mpi, F&& body) {
  std::exception_ptr error;
  try {
    body();
  } catch (const core::ConfigError&) {
    error = std::current_exception();
  }
  if (!mpi.distributed()) {
    if (error) std::rethrow_exception(error);
    return 0;
  }
  const int mine = error ? 2 : 0;
  const int any = mpi.all_max(mine);
  const int root = mpi.broadcast(mine, 0);
  if (any == 0) return 0;
  return end_together(mpi, error && (mpi.rank() == 0 || root == 0) ? error : nullptr, 2);
}

// Rank 0's part (all of it in one process): runs the sweep, handing points to the other ranks
// under mpirun, and writes the file.
int lead_sweep(const MpiSession& mpi, const Args& args, const std::string& file, const config::SweepSpec& spec,
               SweepRunOptions o, int jobs, const PointRunner& run_point, std::ostream& out) {
  // First, so that an exception from here on unwinds through ~MpiSweepMaster, which aborts the
  // job if the workers were never released (they would wait for rank 0 forever).
  std::optional<MpiSweepMaster> master;
  if (mpi.distributed()) o.remote = &master.emplace(mpi);
  o.jobs = jobs > 0 ? static_cast<unsigned>(jobs)
           : mpi.distributed() ? 1u
                               : std::max(1u, std::thread::hardware_concurrency());
  o.command_line = command_line("sweep", args);
  o.progress = &std::cerr;
  o.progress_is_terminal = ::isatty(STDERR_FILENO) != 0;
  const SigintFlag sigint;
  o.interrupt = &sigint.raised();

  SweepRunner runner(spec, o, run_point);
  SweepSummary s;
  try {
    s = runner.run();
  } catch (const SweepInterrupted& e) {
    std::cerr << "attnsim sweep: " << e.what() << "\n";
    return 130;
  } catch (const io::OutputError& e) {
    // A full disk mid-sweep: the journal keeps every point made durable before it.
    const io::PointJournal journal(io::PointJournal::dir_for(o.out_path), "");
    if (!journal.exists()) throw;
    throw io::OutputError(e.path(), e.problems().front().message + "; the journal " + journal.dir() + " keeps the " +
                                        std::to_string(journal.size()) +
                                        " points finished before it: free some space, then rerun with --resume");
  }
  out << "sweep " << (spec.name.empty() ? file : spec.name) << ": " << s.total << " points";
  if (o.shard_count > 1) out << " (shard " << o.shard_index << "/" << o.shard_count << ")";
  if (mpi.distributed()) out << " on " << mpi.size() << " MPI ranks";
  out << ": " << s.ok << " ok, " << s.impossible << " impossible, " << s.error << " error";
  if (s.resumed) out << " (" << s.resumed << " from the interrupted run)";
  out << "\nwrote " << o.out_path << "\n";
  return s.error ? 3 : 0;
}

int cmd_sweep(const Args& args, std::ostream& out) {
  const MpiSession mpi;
  std::string file, shard;
  std::vector<std::string> sets;
  SweepRunOptions o;
  int jobs = 0;
  bool dry_run = false;
  po::options_description desc("options");
  desc.add_options()
      ("file", po::value<std::string>(&file)->required(), "sweep YAML file")
      ("out", po::value<std::string>(&o.out_path), "output HDF5 file (required unless --dry-run)")
      ("jobs,j", po::value<int>(&jobs)->default_value(0),
       "points run in parallel (0: the cores available; 1 on rank 0 under mpirun)")
      ("resume", po::bool_switch(&o.resume), "continue an interrupted sweep (skips finished points)")
      ("shard", po::value<std::string>(&shard), "run only the points with index % N == I (I/N)")
      ("set", po::value(&sets)->composing(),
       "override KEY=VALUE for every point (repeatable), after the file's set:, e.g. --set sim.mode=sampled")
      ("dry-run", po::bool_switch(&dry_run),
       "list the points and their estimated cost (tile ops, CTAs, peak memory); run and write nothing");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  std::optional<config::SweepSpec> spec;
  std::optional<config::SweepExpander> expander;
  bool help = false;
  const int input = agree_on_input(mpi, [&]() {
    help = !parse_options(args, kUsage, desc, vm, out, &pos);
    if (help) return;
    if (jobs < 0) throw core::ConfigError(core::ConfigProblem{"", 0, "-j", "must not be negative"});
    if (!shard.empty()) parse_shard(shard, o);
    if (dry_run && (o.resume || !o.out_path.empty()))
      throw core::ConfigError(core::ConfigProblem{"", 0, o.resume ? "--resume" : "--out",
                                                  "not with --dry-run, which writes nothing"});
    if (!dry_run) {
      if (o.out_path.empty())
        throw core::ConfigError(core::ConfigProblem{"", 0, "--out", "the option is required (or --dry-run)"});
      check_output_path(o.out_path, "--out");
    }
    spec.emplace(config::SweepLoader::load_file(file, config::parse_overrides(sets)));
    expander.emplace(*spec);
  });
  if (input != 0) return input;
  if (help) {
    if (mpi.rank() == 0)
      out << "built " << (MpiSession::built_with_mpi() ? "with" : "without") << " MPI\n";
    return 0;
  }
  // Every rank expands the sweep itself: all must have read the same text (e.g. FILE on a file
  // system shared by the nodes), or their point indices would mean different points.
  const int text_hash = static_cast<int>(std::hash<std::string>{}(spec->text) & 0x7fffffff);
  if (mpi.all_max(mpi.broadcast(text_hash, 0) != text_hash ? 2 : 0) != 0) {
    const auto e = std::make_exception_ptr(core::ConfigError(core::ConfigProblem{
        file, 0, "", "the MPI ranks read different contents of this file (is it on a file system all nodes share?)"}));
    return end_together(mpi, mpi.rank() == 0 ? e : nullptr, 2);
  }
  if (dry_run) {  // rank 0 alone prints the plan; under mpirun the other ranks wait for it
    if (mpi.rank() == 0)
      print_sweep_plan(*spec, *expander, {file, o.shard_index, o.shard_count, default_max_memory_bytes()}, out);
    out.flush();
    return mpi.distributed() ? end_together(mpi, nullptr, 0) : 0;
  }
  const PointRunner run_point = [](const core::Workload& w, const core::DeviceSpec& d) { return run_workload(w, d); };
  std::ostream& report = report_stream(o.out_path, out);  // stderr when --out is stdout
  if (!mpi.distributed()) return lead_sweep(mpi, args, file, *spec, o, jobs, run_point, report);
  // Under mpirun every rank ends through end_together, whatever its result: a worker once rank 0
  // has released it (rank 0 reports why), rank 0 once it has written its summary or its error.
  if (mpi.rank() != 0) return end_together(mpi, nullptr, MpiSweepWorker(mpi, *expander, run_point).run());
  std::exception_ptr error;
  int code = 0;
  try {
    code = lead_sweep(mpi, args, file, *spec, o, jobs, run_point, report);
  } catch (...) {
    error = std::current_exception();
  }
  out.flush();
  return end_together(mpi, error, code);
}

}  // namespace attnsim::app
