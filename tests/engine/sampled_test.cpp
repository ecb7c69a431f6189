// sim.mode: sampled against full on workloads CI can afford: closed-form bytes exact with the L2
// off, time and bytes within the error targets with the L2 on, the sampling recorded, the same
// result twice.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/io_counts.h"
#include "sim/engine/engine.h"
#include "tests/engine/test_launches.h"

namespace attnsim::engine {
namespace {

using testing::metric;

struct Pair {
  core::KernelResult full, sampled;
};

std::vector<Pair> run_both(const core::DeviceSpec& d, const std::vector<config::Override>& sets) {
  const core::Workload w = config::workload_for_kernel("flash2", sets);
  const core::TileProgram program = kernels::make_program(w, d);
  EngineOptions full, sampled;
  sampled.sampled = true;
  const auto a = simulate(d, program, full), b = simulate(d, program, sampled);
  std::vector<Pair> out;
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back({a[i], b[i]});
  return out;
}

double rel(double a, double b) { return b != 0 ? std::fabs(a - b) / b : std::fabs(a); }

TEST(Sampled, ClosedFormBytesExactWithTheL2Off) {
  // h200 with the L2 off; 8 SMs so that the 128 CTAs of the second shape make 8 waves and whole
  // CTAs are skipped too.
  for (const char* sms : {"132", "8"}) {
    const core::DeviceSpec d = config::load_device(
        "h200", {{"l2.capacity_bytes", "0"}, {"sm.l1_caches_global_loads", "false"}, {"sm.count", sms}});
    for (const char* causal : {"false", "true"}) {
      const bool small = std::string(sms) == "8";
      const auto runs = run_both(d, {{"heads", "4"}, {"seq", small ? "8192" : "4096"},
                                     {"head_dim", small ? "64" : "128"}, {"causal", causal}});
      for (const Pair& p : runs) {
        const std::string what = std::string("sms ") + sms + " causal " + causal;
        EXPECT_EQ(p.sampled.tensors.dram, p.full.tensors.dram) << what;
        EXPECT_EQ(p.sampled.tensors.lts, p.full.tensors.lts) << what;
        EXPECT_EQ(p.sampled.tensors.smem, p.full.tensors.smem) << what;
        EXPECT_EQ(p.sampled.totals.stats.flops, p.full.totals.stats.flops) << what;
        EXPECT_EQ(p.sampled.totals.stats.wavefronts, p.full.totals.stats.wavefronts) << what;
        EXPECT_EQ(metric(p.sampled, "attnsim__sim_mode"), 1);
        EXPECT_EQ(metric(p.full, "attnsim__sim_mode"), 0);
        EXPECT_EQ(metric(p.full, "attnsim__sampled_fraction"), 1);
        if (std::string(causal) == "true") {
          // CTAs of unequal step counts: detected, simulated in full.
          EXPECT_EQ(metric(p.sampled, "attnsim__sampled_fraction"), 1) << what;
          EXPECT_EQ(p.sampled.totals.cycles, p.full.totals.cycles) << what;
        } else {
          // Sampling took place: most loop steps (and CTAs) were extrapolated, in fewer events.
          EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), small ? 0.1 : 0.5) << what;
          if (small) EXPECT_GT(p.sampled.totals.ctas_skipped, 0u) << what;
          EXPECT_LT(p.sampled.totals.stats.events, p.full.totals.stats.events / 2) << what;
        }
      }
    }
  }
}

// Bytes within the error target (1 %) where the L2 holds the data the simulated steps share,
// and the time within the error estimate the run reports (twice it, as a standard error). The
// time target itself (worst 1 %, median 0.3 %) is not met by the method (docs/sampling.md):
// 2 % here is a regression bound, not the target.
TEST(Sampled, BytesWithinOnePercentAndTimeWithinItsEstimate) {
  const core::DeviceSpec d = config::load_device("h200");
  const std::vector<std::vector<config::Override>> cases = {
      {{"heads", "8"}, {"seq", "4096"}, {"head_dim", "128"}},
      {{"heads", "16"}, {"seq", "4096"}, {"head_dim", "64"}},
  };
  for (const auto& c : cases) {
    for (const Pair& p : run_both(d, c)) {
      const std::string what = p.full.name + " d=" + c[2].value;
      const double err = rel(p.sampled.totals.time_ns, p.full.totals.time_ns);
      EXPECT_LT(err, 2 * p.sampled.totals.sampling_error) << what;
      EXPECT_LT(err, 0.02) << what;
      const double df = static_cast<double>(p.full.totals.dram_read + p.full.totals.dram_write);
      const double ds = static_cast<double>(p.sampled.totals.dram_read + p.sampled.totals.dram_write);
      EXPECT_LT(rel(ds, df), 0.01) << what;
      EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)),
                0.01)
          << what;
      EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.5) << what;
    }
  }
}

TEST(Sampled, SameResultTwice) {
  const core::DeviceSpec d = config::load_device("h200");
  const core::Workload w = config::workload_for_kernel("flash2", {{"heads", "4"}, {"seq", "2048"}, {"causal", "true"}});
  const core::TileProgram program = kernels::make_program(w, d);
  EngineOptions o;
  o.sampled = true;
  const auto a = simulate(d, program, o), b = simulate(d, program, o);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].totals.cycles, b[i].totals.cycles);
    EXPECT_EQ(a[i].tensors.dram, b[i].tensors.dram);
    EXPECT_EQ(a[i].totals.memory.lts_sectors, b[i].totals.memory.lts_sectors);
  }
}

TEST(Sampled, ModeIsAWorkloadKey) {
  EXPECT_EQ(config::workload_for_kernel("flash2", {{"sim.mode", "sampled"}}).sim_mode, core::SimMode::kSampled);
  EXPECT_EQ(config::workload_for_kernel("flash2", {}).sim_mode, core::SimMode::kFull);
  try {
    config::workload_for_kernel("flash2", {{"sim.mode", "fast"}});
    FAIL() << "sim.mode: fast accepted";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sim.mode"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("full, sampled"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnsim::engine
