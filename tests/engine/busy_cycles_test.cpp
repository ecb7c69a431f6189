// The engine's busy-cycle counters (attnsim__*_busy_cycles), the inputs of attnsim__bound: each
// resource's summed service time (units served / rate), checked against hand-computed service
// times, and the bound they give (core/derived_metrics.h).
#include <gtest/gtest.h>

#include <vector>

#include "sim/core/derived_metrics.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"
#include "sim/io/launch_metrics.h"
#include "test_launches.h"

namespace attnsim::engine {
namespace {

using testing::load;
using testing::metric;
using testing::program_of;
using testing::ScriptedLaunch;
using testing::simple;
using testing::small_gpu;
using testing::store;


TEST(BusyCycles, HbmChannelTimeOfOneLineWithTheL2Off) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 32, 0, [](std::uint64_t) {
    return std::vector<core::TileOp>{load(0, 1, 128, 128, true), simple(core::OpKind::kCommit),
                                     simple(core::OpKind::kWait, 0)};
  }));
  const auto r = simulate(d, p).at(0);
  // 128 B on a 64 B/cycle channel (256 GB/s / 4 channels at 1 GHz): 2 cycles; no L2 port used.
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__dram_busy_cycles"), 2.0);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__l2_busy_cycles"), 0.0);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__lsu_busy_cycles"), 128 / 1e6);
}

TEST(BusyCycles, L2PortTimeOfReadsThroughTheL2) {
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 32, 0, [](std::uint64_t) {
    return std::vector<core::TileOp>{load(0, 4, 128, 128, true), simple(core::OpKind::kCommit),
                                     simple(core::OpKind::kWait, 0)};
  }));
  const auto r = simulate(small_gpu(), p).at(0);
  // 512 B through one partition's port at 4096 B/cycle; the misses also occupy HBM, 512 B at
  // 64 B/cycle per channel.
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__l2_busy_cycles"), 512.0 / 4096);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__dram_busy_cycles"), 512.0 / 64);
}

TEST(BusyCycles, FinalWriteBackIsNotLaunchTime) {
  // Stores land in the L2; their dirty lines reach HBM only in the write-back after the last CTA,
  // which does not extend the launch: DRAM bytes are written but no channel time is counted.
  const auto p = program_of(std::make_unique<ScriptedLaunch>(4, 128, 0, [](std::uint64_t cta) {
    return std::vector<core::TileOp>{store(cta * 4096, 16, 256, 256)};
  }));
  const auto r = simulate(small_gpu(), p).at(0);
  EXPECT_EQ(metric(r, "dram__bytes_write.sum"), 4.0 * 16 * 256);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__dram_busy_cycles"), 0.0);
}

TEST(BusyCycles, IssueSlotsOfEverySmAreBusyAndBoundTheLaunch) {
  // 8 CTAs x 12800 thread instructions on 4 SMs issuing 128 per cycle: 800 busy cycles, all of
  // the 4 x 200 SM cycles the launch takes.
  const auto p = program_of(std::make_unique<ScriptedLaunch>(8, 128, 48 * 1024, [](std::uint64_t) {
    return std::vector<core::TileOp>{simple(core::OpKind::kIssue, 12800)};
  }));
  const core::DeviceSpec d = small_gpu();
  auto r = simulate(d, p).at(0);
  r.metrics = io::launch_metrics(r.totals);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__issue_busy_cycles"), 800.0);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__tensor_busy_cycles"), 0.0);
  core::add_derived_metrics(r.metrics, d);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__issue_busy_pct"), 100.0);
  EXPECT_EQ(core::bound_of(r.metrics), "issue");
}

TEST(BusyCycles, AnIssueOpTakesAtLeastItsChainWhileOtherWarpsIssue) {
  // As above, but each op is one warp's dependent chain of at least 1000 cycles (kIssue's `m`):
  // the op lasts 1000 cycles, the issue slots stay busy 800 cycles in all, and the CTAs of an SM
  // wait out their chains side by side (2 per SM: 1000 cycles, not 2000).
  auto cycles = [](std::uint32_t chain) {
    const auto p = program_of(std::make_unique<ScriptedLaunch>(8, 128, 48 * 1024, [chain](std::uint64_t) {
      core::TileOp op = simple(core::OpKind::kIssue, 12800);
      op.m = chain;
      return std::vector<core::TileOp>{op};
    }));
    auto r = simulate(small_gpu(), p).at(0);
    r.metrics = io::launch_metrics(r.totals);
    EXPECT_DOUBLE_EQ(metric(r, "attnsim__issue_busy_cycles"), 800.0);
    return metric(r, "attnsim__cycles");
  };
  EXPECT_DOUBLE_EQ(cycles(0), 200.0);
  EXPECT_DOUBLE_EQ(cycles(1000), 1000.0);
}

TEST(BusyCycles, TensorPipeBoundsAnMmaOnlyLaunch) {
  // Each CTA: one 64x64x64 MMA = 524,288 FLOP, 512 cycles at 1024 FLOP/cycle; 4 CTAs on 4 SMs.
  const auto p = program_of(std::make_unique<ScriptedLaunch>(4, 128, 0, [](std::uint64_t) {
    core::TileOp mma = simple(core::OpKind::kMma);
    mma.m = mma.n = mma.k = 64;
    return std::vector<core::TileOp>{mma};
  }));
  const core::DeviceSpec d = small_gpu();
  auto r = simulate(d, p).at(0);
  r.metrics = io::launch_metrics(r.totals);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__tensor_busy_cycles"), 4 * 512.0);
  core::add_derived_metrics(r.metrics, d);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__tensor_busy_pct"), 100.0);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__pct_peak_flops"), 100.0);
  EXPECT_EQ(core::bound_of(r.metrics), "tensor");
}

TEST(BusyCycles, OneLatencyBoundLoadIsLatency) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 32, 0, [](std::uint64_t) {
    return std::vector<core::TileOp>{load(0, 1, 128, 128, true), simple(core::OpKind::kCommit),
                                     simple(core::OpKind::kWait, 0)};
  }));
  auto r = simulate(d, p).at(0);
  r.metrics = io::launch_metrics(r.totals);
  core::add_derived_metrics(r.metrics, d);
  // 2 channel cycles out of 4 channels x ~102 cycles.
  EXPECT_LT(metric(r, "attnsim__dram_busy_pct"), 1.0);
  EXPECT_EQ(core::bound_of(r.metrics), "latency");
}

}  // namespace
}  // namespace attnsim::engine
