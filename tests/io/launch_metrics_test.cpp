// io::launch_metrics: the names, order and arithmetic of a launch's metrics from its typed totals.
#include <gtest/gtest.h>

#include "sim/core/run_result.h"
#include "sim/io/launch_metrics.h"

namespace attnsim::io {
namespace {

double value(const core::Metrics& m, const char* name) {
  const core::Metric* x = core::find_metric(m, name);
  EXPECT_NE(x, nullptr) << name;
  return x ? x->value : -1;
}

core::LaunchTotals some_totals() {
  core::LaunchTotals t;
  t.dram_read = 3000;
  t.dram_write = 1000;
  t.time_ns = 2000;
  t.cycles = 3960;
  t.memory.lts_sectors = 8;
  t.memory.lts_hit_sectors = 6;
  t.memory.l2_request_bytes = 4096;
  t.warps_integral = 32 * 100;
  t.active_cycles = 100;
  t.max_warps_per_sm = 64;
  t.threads_per_cta = 128;
  t.smem_per_cta = 49152;
  t.stats.events = 7;
  t.busy.dma = 12.5;
  return t;
}

TEST(LaunchMetrics, NamesTheTypedTotalsInTheirFixedOrder) {
  const core::Metrics m = launch_metrics(some_totals());
  ASSERT_GE(m.size(), 3u);
  EXPECT_EQ(m[0].name, "dram__bytes_read.sum");
  EXPECT_EQ(m[1].name, "dram__bytes_write.sum");
  EXPECT_EQ(m[2].name, "lts__t_bytes.sum");
  EXPECT_EQ(m.back().name, "attnsim__issue_busy_cycles");  // no cycles_per_load: not timed
  EXPECT_EQ(value(m, "dram__bytes_read.sum"), 3000);
  EXPECT_EQ(value(m, "lts__t_sector_hit_rate.pct"), 75);
  EXPECT_EQ(value(m, "sm__warps_active.avg.pct_of_peak_sustained_active"), 50);
  EXPECT_DOUBLE_EQ(value(m, "dram__bytes.sum.per_second"), 4000 / 2e-6);
  EXPECT_EQ(value(m, "launch__block_size"), 128);
  EXPECT_EQ(value(m, "launch__shared_mem_per_block"), 49152);
  EXPECT_EQ(value(m, "attnsim__events"), 7);
  EXPECT_EQ(value(m, "attnsim__l2_request_bytes"), 4096);
  EXPECT_EQ(value(m, "attnsim__dma_busy_cycles"), 12.5);
}

TEST(LaunchMetrics, CyclesPerLoadOnlyWhenTheKernelTimesItsLoads) {
  core::LaunchTotals t = some_totals();
  t.cycles_per_load = 612.5;
  const core::Metrics m = launch_metrics(t);
  EXPECT_EQ(m.back().name, "attnsim__cycles_per_load");
  EXPECT_EQ(m.back().value, 612.5);
  std::vector<core::KernelResult> kernels(2);
  kernels[1].totals = t;
  name_launch_metrics(kernels);
  EXPECT_EQ(kernels[0].metrics.size() + 1, kernels[1].metrics.size());
  EXPECT_EQ(kernels[1].metrics.back().value, 612.5);
}

}  // namespace
}  // namespace attnsim::io
