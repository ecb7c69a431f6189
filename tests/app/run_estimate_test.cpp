// The resource guard: estimate_run's events and memory, and run_workload refusing a workload
// over RunOptions::max_memory_bytes with the estimate in the message.
#include "sim/app/run_estimate.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernels/registry.h"
#include "sim/app/run_pipeline.h"
#include "sim/config/config.h"
#include "sim/core/errors.h"

namespace attnsim::app {
namespace {

core::Workload small_flash2(bool causal) {
  return config::workload_for_kernel(
      "flash2", config::parse_overrides({"seq=256", "head_dim=32", "heads=2", causal ? "causal=true" : "causal=false"}));
}

TEST(RunEstimate, EventsEqualOpsOfEveryCtaWhenCtasAreAlike) {
  const core::DeviceSpec device = config::load_device("teaching");
  const core::TileProgram program = kernels::make_program(small_flash2(false), device);
  double ops = 0;
  std::vector<core::TileOp> buf;
  for (const auto& launch : program.launches)
    for (std::uint64_t cta = 0; cta < launch->shape().num_ctas(); ++cta)
      for (std::uint64_t step = 0; buf.clear(), launch->emit_step(cta, step, buf); ++step) ops += buf.size();
  ASSERT_GT(ops, 0);
  EXPECT_DOUBLE_EQ(estimate_run(program, device).events, ops);
}

TEST(RunEstimate, L2TagArrayIsSixteenBytesPerLine) {
  core::DeviceSpec device = config::load_device("h200", config::parse_overrides({"l2.capacity_bytes=64 MiB"}));
  const core::TileProgram program = kernels::make_program(small_flash2(false), device);
  EXPECT_DOUBLE_EQ(estimate_run(program, device).l2_tag_bytes, 64.0 * 1024 * 1024 / device.l2.line_bytes * 16);
}

TEST(RunEstimate, FunctionalModeCountsTheScoreMatrices) {
  const core::DeviceSpec device = config::load_device("teaching");
  core::Workload w = small_flash2(false);
  const double without = estimate_run(kernels::make_program(w, device), device).functional_bytes;
  w.functional = true;
  const double with = estimate_run(kernels::make_program(w, device), device).functional_bytes;
  EXPECT_EQ(without, 0);
  EXPECT_GE(with, 256.0 * 256.0 * sizeof(double));  // at least one 256 x 256 score matrix in double
}

// flash3 emits each warp group's ops one K/V block at a time, so its slots hold a few dozen ops
// whatever N: a million-token flash3 fits in well under 1 GiB (it was estimated at 19.7 GiB).
TEST(RunEstimate, Flash3SlotsHoldOneKvBlockOfOps) {
  const core::DeviceSpec device = config::load_device("h200");
  const core::Workload w = config::workload_for_kernel(
      "flash3", config::parse_overrides({"seq=1048576", "head_dim=128", "heads=32", "batch=1"}));
  const RunEstimate e = estimate_run(kernels::make_program(w, device), device);
  EXPECT_LT(e.slot_bytes, 64.0 * 1024 * 1024);
  EXPECT_LT(e.peak_memory_bytes(), 1024.0 * 1024 * 1024);
}

TEST(RunGuard, TinyLimitRefusesWithTheEstimate) {
  const core::DeviceSpec device = config::load_device("teaching");
  RunOptions options;
  options.max_memory_bytes = 1024;
  try {
    run_workload(small_flash2(true), device, options);
    FAIL() << "expected a ConfigError";
  } catch (const core::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--max-memory"), std::string::npos) << what;
    EXPECT_NE(what.find("peak memory ~"), std::string::npos) << what;
    EXPECT_NE(what.find("1024 bytes"), std::string::npos) << what;
  }
}

TEST(RunGuard, ZeroMeansNoLimit) {
  const core::DeviceSpec device = config::load_device("teaching");
  RunOptions options;
  options.max_memory_bytes = 0;
  EXPECT_NO_THROW(run_workload(small_flash2(false), device, options));
}

TEST(RunGuard, DefaultLimitLetsANormalWorkloadRun) {
  EXPECT_GT(RunOptions{}.max_memory_bytes, 0u);
  EXPECT_NO_THROW(run_workload(small_flash2(false), config::load_device("h200")));
}

TEST(RunGuard, HugeL2IsRefusedByDefault) {
  // A 64 TiB L2 needs 8 TiB of tags: more than half of any test machine's RAM.
  const core::DeviceSpec device = config::load_device("h200", config::parse_overrides({"l2.capacity_bytes=64 TiB"}));
  EXPECT_THROW(run_workload(small_flash2(false), device), core::ConfigError);
}

}  // namespace
}  // namespace attnsim::app
