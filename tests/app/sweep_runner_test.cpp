#include "sim/app/sweep_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/app/commands.h"
#include "sim/config/sweep_loader.h"
#include "sim/core/errors.h"
#include "sim/io/h5_results_reader.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

const std::string kSweep =
    "device: teaching\nbase:\n  kernel: flash2\n  seq: 256\n  head_dim: 32\n"
    "axes:\n  block_m: [32, 64]\n  block_n: [16, 32, 64]\nconstraints:\n  - block_n <= block_m\n";

// A fake simulation whose metrics are known functions of the workload.
core::RunResult fake(const core::Workload& w, const core::DeviceSpec& d) {
  core::RunResult r;
  r.workload = w;
  r.device_name = d.name;
  core::KernelResult k;
  k.name = "fake";
  k.metrics = {{"dram__bytes_read.sum", static_cast<double>(w.block_m * 1000 + w.block_n)}};
  r.kernels = {k};
  r.metrics = k.metrics;
  return r;
}

std::string scratch(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnsim_sweep_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string table_text(const std::string& path) {
  const io::ResultsFile f = io::read_results_h5(path);
  std::ostringstream s;
  for (const auto& c : f.table) {
    s << c.name << ":";
    for (const auto& v : c.cells) s << " " << io::cell_to_string(v);
    s << "\n";
  }
  for (const auto& p : f.points) s << io::serialize_point(p);
  return s.str();
}

SweepSummary run_sweep(const config::SweepSpec& spec, const std::string& out, unsigned jobs, bool resume = false,
                       PointRunner runner = fake) {
  SweepRunOptions o;
  o.out_path = out;
  o.jobs = jobs;
  o.resume = resume;
  o.command_line = "test";
  return SweepRunner(spec, o, std::move(runner)).run();
}

TEST(SweepRunner, ImpossiblePointsAreCountedAndKept) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string out = scratch("count") + "/s.h5";
  const SweepSummary s = run_sweep(spec, out, 1);
  EXPECT_EQ(s.total, 6u);
  EXPECT_EQ(s.ok, 5u);
  EXPECT_EQ(s.impossible, 1u);  // block_m 32, block_n 64
  const io::ResultsFile f = io::read_results_h5(out);
  ASSERT_EQ(f.points.size(), 6u);
  EXPECT_EQ(f.points[2].status, "impossible");
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

TEST(SweepRunner, OneAndTwoThreadsWriteIdenticalData) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string dir = scratch("jobs");
  run_sweep(spec, dir + "/a.h5", 1);
  run_sweep(spec, dir + "/b.h5", 2);
  EXPECT_EQ(table_text(dir + "/a.h5"), table_text(dir + "/b.h5"));
}

TEST(SweepRunner, MetricComesFromTheRunner) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string out = scratch("metric") + "/s.h5";
  run_sweep(spec, out, 2);
  const io::ResultsFile f = io::read_results_h5(out);
  const io::Column* dram = nullptr;
  for (const auto& c : f.table) {
    if (c.name == "dram__bytes_read.sum") dram = &c;
  }
  ASSERT_NE(dram, nullptr);
  EXPECT_EQ(std::get<double>(dram->cells[4]), 64.0 * 1000 + 32);  // point 4: block_m 64, block_n 32
}

// A null axis value leaves the key unset: the row holds what a row lacking the parameter holds
// (NaN in a numeric column), and the runner gets the workload without the key.
TEST(SweepRunner, NullAxisValueIsAnUnsetCellInTheTable) {
  const config::SweepSpec spec = config::SweepLoader::load_text(
      "device: teaching\nbase:\n  seq: 256\n  head_dim: 32\naxes:\n  zip:\n    kernel: [flash2, standard]\n"
      "    block_m: [64, ~]\n",
      "s.yaml");
  const std::string out = scratch("null") + "/s.h5";
  const SweepSummary s = run_sweep(spec, out, 1);
  EXPECT_EQ(s.ok, 2u);
  const io::ResultsFile f = io::read_results_h5(out);
  const io::Column* block_m = nullptr;
  for (const auto& c : f.table)
    if (c.name == "block_m") block_m = &c;
  ASSERT_NE(block_m, nullptr);
  ASSERT_EQ(block_m->cells.size(), 2u);
  EXPECT_EQ(std::get<double>(block_m->cells[0]), 64.0);
  EXPECT_TRUE(std::isnan(std::get<double>(block_m->cells[1])));
  const io::Column* dram = nullptr;
  for (const auto& c : f.table)
    if (c.name == "dram__bytes_read.sum") dram = &c;
  ASSERT_NE(dram, nullptr);
  EXPECT_EQ(std::get<double>(dram->cells[1]), 0.0);  // fake(): standard's unset block_m/block_n are 0
}

struct Interrupt {};

TEST(SweepRunner, ResumeAfterInterruptionGivesSameTable) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string dir = scratch("resume");
  run_sweep(spec, dir + "/full.h5", 1);
  // First attempt dies (an exception no one handles) at the fourth point it runs.
  int calls = 0;
  auto dying = [&calls](const core::Workload& w, const core::DeviceSpec& d) {
    if (++calls == 4) throw Interrupt{};
    return fake(w, d);
  };
  EXPECT_THROW(run_sweep(spec, dir + "/r.h5", 1, false, dying), Interrupt);
  ASSERT_TRUE(fs::exists(dir + "/r.h5.partial"));
  // Without --resume the journal is refused; with it, only the missing points run.
  EXPECT_THROW(run_sweep(spec, dir + "/r.h5", 1), core::ConfigError);
  int resumed_calls = 0;
  auto counting = [&resumed_calls](const core::Workload& w, const core::DeviceSpec& d) {
    ++resumed_calls;
    return fake(w, d);
  };
  const SweepSummary s = run_sweep(spec, dir + "/r.h5", 2, true, counting);
  EXPECT_EQ(s.resumed, 3u);  // 3 run before the interruption (impossible points go out last)
  EXPECT_EQ(resumed_calls, 2);
  EXPECT_EQ(table_text(dir + "/full.h5"), table_text(dir + "/r.h5"));
}

TEST(SweepRunner, ResumeFromJournalOfOtherSweepIsRefused) {
  const config::SweepSpec a = config::SweepLoader::load_text(kSweep, "s.yaml");
  const config::SweepSpec b = config::SweepLoader::load_text(kSweep + "name: other\n", "s.yaml");
  const std::string dir = scratch("other");
  auto dying = [](const core::Workload&, const core::DeviceSpec&) -> core::RunResult { throw Interrupt{}; };
  EXPECT_THROW(run_sweep(a, dir + "/r.h5", 1, false, dying), Interrupt);
  EXPECT_THROW(run_sweep(b, dir + "/r.h5", 1, true), core::ConfigError);
}

TEST(SweepRunner, SimErrorIsRecordedAsErrorRow) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string out = scratch("simerr") + "/s.h5";
  auto failing = [](const core::Workload& w, const core::DeviceSpec& d) {
    if (w.block_n == 16) throw core::SimError("stuck");
    return fake(w, d);
  };
  const SweepSummary s = run_sweep(spec, out, 2, false, failing);
  EXPECT_EQ(s.error, 2u);
  EXPECT_EQ(io::read_results_h5(out).points[0].reason, "stuck");
}

TEST(SweepRunner, ShardsPartitionThePoints) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string dir = scratch("shard");
  SweepRunOptions o;
  o.out_path = dir + "/s1.h5";
  o.shard_index = 1;
  o.shard_count = 4;
  SweepRunner(spec, o, fake).run();
  const io::ResultsFile f = io::read_results_h5(o.out_path);
  ASSERT_EQ(f.points.size(), 2u);  // indices 1 and 5
  EXPECT_EQ(f.points[0].index, 1u);
  EXPECT_EQ(f.points[1].index, 5u);
  EXPECT_EQ(f.string_attrs.at("shard"), "1/4");
}

TEST(SweepCli, BadSweepFileExitsTwoWithNoOutput) {
  const std::string dir = scratch("cli_bad");
  std::ofstream(dir + "/bad.yaml") << "device: teaching\naxes:\n  block_m: []\n";
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"sweep", dir + "/bad.yaml", "--out", dir + "/o.h5"}, out, err), 2);
  EXPECT_NE(err.str().find("bad.yaml:3: axes.block_m: empty axis"), std::string::npos) << err.str();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(SweepCli, BadShardExitsTwo) {
  const std::string dir = scratch("cli_shard");
  std::ofstream(dir + "/s.yaml") << kSweep;
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"sweep", dir + "/s.yaml", "--out", dir + "/o.h5", "--shard", "4/4"}, out, err), 2);
  EXPECT_FALSE(fs::exists(dir + "/o.h5"));
}

}  // namespace
}  // namespace attnsim::app

namespace attnsim::app {
namespace {

// Points go out longest first (estimated engine events), impossible points last, ties in sweep
// order: seq 512 costs more than seq 128, flash2 block_m 256 with stages 4 cannot be placed on
// the teaching device (cost 0).
TEST(SweepRunnerOrder, LongestEstimatedPointsFirstImpossibleLast) {
  const config::SweepSpec spec = config::SweepLoader::load_text(
      "device: teaching\nbase:\n  kernel: flash2\n  head_dim: 32\n  block_m: 32\n  block_n: 32\n"
      "axes:\n  seq: [128, 512, 256, 128]\n",
      "order.yaml");
  const config::SweepExpander ex(spec);
  std::vector<config::SweepPoint> points;
  for (std::uint64_t i = 0; i < ex.size(); ++i) points.push_back(ex.point(i));
  config::SweepPoint impossible = points[0];
  impossible.index = 4;
  impossible.possible = false;
  points.push_back(impossible);
  std::vector<const config::SweepPoint*> todo;
  for (const auto& p : points) todo.push_back(&p);
  EXPECT_GT(estimated_cost(points[1]), estimated_cost(points[2]));
  EXPECT_GT(estimated_cost(points[2]), estimated_cost(points[0]));
  EXPECT_EQ(estimated_cost(impossible), 0);
  const std::map<std::uint64_t, double> costs = order_longest_first(todo);
  std::vector<std::uint64_t> order;
  for (const auto* p : todo) order.push_back(p->index);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{1, 2, 0, 3, 4}));
  ASSERT_EQ(costs.size(), points.size());  // the costs it sorted by, for the progress report's ETA
  for (const auto& p : points) EXPECT_EQ(costs.at(p.index), estimated_cost(p)) << "point " << p.index;
}

}  // namespace
}  // namespace attnsim::app

namespace attnsim::app {
namespace {

// The ETA weighs points by their estimated cost: a sweep whose first point is 90 % of its work
// has 1 s left when that point took 9 s, not nine more points' worth of 9 s each.
TEST(SweepRunnerProgress, EtaWeighsPointsByTheirEstimatedCost) {
  EXPECT_DOUBLE_EQ(sweep_eta_seconds(9.0, 1, 9, 90.0, 10.0), 1.0);
  EXPECT_DOUBLE_EQ(sweep_eta_seconds(9.0, 1, 9, 0.0, 0.0), 81.0);  // nothing estimable: by points
  EXPECT_DOUBLE_EQ(sweep_eta_seconds(0.0, 0, 10, 0.0, 100.0), 0.0);  // nothing finished yet
  EXPECT_DOUBLE_EQ(sweep_eta_seconds(4.0, 2, 0, 50.0, 0.0), 0.0);    // done
}

}  // namespace
}  // namespace attnsim::app
