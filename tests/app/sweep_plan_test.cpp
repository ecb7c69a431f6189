// `attnsim sweep FILE --dry-run`: one row per point with its keys, status and the estimate that
// run_estimate gives; impossible points with their reason; nothing written.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernels/registry.h"
#include "sim/app/run_estimate.h"
#include "sim/app/sweep_plan.h"
#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_loader.h"
#include "sim/core/errors.h"
#include "tests/app/sweep_cli_helpers.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

// Three tile heights on the teaching preset (64 KiB of shared memory per CTA): block_m 512 does
// not fit ((512 + 2 x 32) rows x 64 x 2 B = 72 KiB).
const std::string kSweep =
    "name: plan\ndevice: teaching\nbase:\n  kernel: flash2\n  seq: 256\n  head_dim: 64\n  block_n: 32\n"
    "axes:\n  block_m: [32, 64, 512]\n";

// The estimate's events as the plan prints them; "" where the kernel refuses the point (as a
// sweep records it: impossible).
std::string events_of(const config::SweepPoint& p) {
  if (!p.possible) return "";
  try {
    const RunEstimate e = estimate_run(kernels::make_program(p.workload, *p.device), *p.device);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", e.events);
    return buf;
  } catch (const core::ConfigError&) {
    return "";
  }
}

TEST(SweepPlan, DryRunListsEveryPointWithItsEstimateAndWritesNothing) {
  const std::string d = sweep_test::scratch("sweep_plan", "list");
  std::ofstream(d + "/s.yaml") << kSweep;
  std::ostringstream out, err;
  ASSERT_EQ(run_cli({"sweep", d + "/s.yaml", "--dry-run"}, out, err), 0) << err.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("sweep plan: 3 points (--dry-run: nothing is run or written)"), std::string::npos) << text;
  EXPECT_NE(text.find("2 ok, 1 impossible"), std::string::npos) << text;
  EXPECT_NE(text.find("need"), std::string::npos) << "the impossible point's reason is missing:\n" << text;

  const config::SweepSpec spec = config::SweepLoader::load_file(d + "/s.yaml");
  const config::SweepExpander expander(spec);
  std::istringstream lines(text);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    std::uint64_t index = 0;
    std::string block_m, device, status, events;
    if (!(cells >> index >> block_m >> device >> status) || (status != "ok" && status != "impossible"))
      continue;  // heading, rule, summary
    ++rows;
    const config::SweepPoint p = expander.point(index);
    EXPECT_EQ(block_m, config::sweep_value_yaml(p.params.front().second)) << line;
    const std::string expected = events_of(p);
    EXPECT_EQ(status, expected.empty() ? "impossible" : "ok") << line;
    if (expected.empty()) continue;
    cells >> events;
    EXPECT_EQ(events, expected) << line;
  }
  EXPECT_EQ(rows, 3) << text;
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1) << "wrote a file";
}

TEST(SweepPlan, APointOverTheMemoryLimitIsImpossible) {
  const std::string d = sweep_test::scratch("sweep_plan", "memory");
  std::ofstream(d + "/s.yaml") << kSweep;
  const config::SweepSpec spec = config::SweepLoader::load_file(d + "/s.yaml");
  std::ostringstream roomy, tight;
  const config::SweepExpander expander(spec);
  EXPECT_EQ(print_sweep_plan(spec, expander, {"s.yaml", 0, 1, 0}, roomy), 3u);
  EXPECT_NE(roomy.str().find("2 ok, 1 impossible"), std::string::npos) << roomy.str();
  print_sweep_plan(spec, expander, {"s.yaml", 0, 1, 1024}, tight);
  EXPECT_NE(tight.str().find("0 ok, 3 impossible"), std::string::npos) << tight.str();
  EXPECT_NE(tight.str().find("exceeds the limit of 1.0 KiB"), std::string::npos) << tight.str();
}

TEST(SweepPlan, AShardListsItsPointsOnly) {
  const std::string d = sweep_test::scratch("sweep_plan", "shard");
  std::ofstream(d + "/s.yaml") << kSweep;
  const config::SweepSpec spec = config::SweepLoader::load_file(d + "/s.yaml");
  std::ostringstream out;
  EXPECT_EQ(print_sweep_plan(spec, config::SweepExpander(spec), {"s.yaml", 1, 2, 0}, out), 1u);  // point 1 of 0..2
  EXPECT_NE(out.str().find("3 points, 1 in shard 1/2"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("1 ok, 0 impossible"), std::string::npos) << out.str();
}

// The plan says what the sweep then records: a point whose launch no SM can hold (1,024 threads
// x 72 registers, 1,056 threads) is impossible in both, with the same reason.
TEST(SweepPlan, PointsTheSweepCallsImpossibleAreImpossibleInThePlan) {
  const std::string d = sweep_test::scratch("sweep_plan", "occupancy");
  std::ofstream(d + "/s.yaml") << "name: warps\ndevice: h200\nbase:\n  kernel: flash2\n  seq: 128\n"
                                  "  head_dim: 64\naxes:\n  warps: [4, 32, 33]\n";
  const config::SweepSpec spec = config::SweepLoader::load_file(d + "/s.yaml");
  const SweepPlan plan = plan_sweep(config::SweepExpander(spec), {"s.yaml", 0, 1, 0});
  ASSERT_EQ(sweep_test::cli({"sweep", d + "/s.yaml", "--out", d + "/s.h5"}), 0);
  const auto points = io::read_results_h5(d + "/s.h5").points;
  ASSERT_EQ(plan.rows.size(), 3u);
  ASSERT_EQ(points.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plan.rows[i].ok, points[i].status == io::kStatusOk) << i << ": " << points[i].reason;
    EXPECT_EQ(plan.rows[i].reason, points[i].reason) << i;
  }
  EXPECT_TRUE(plan.rows[0].ok);
  EXPECT_NE(plan.rows[1].reason.find("registers one block may use"), std::string::npos) << plan.rows[1].reason;
}

}  // namespace
}  // namespace attnsim::app
