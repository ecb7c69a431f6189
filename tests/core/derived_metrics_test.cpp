// Derived metrics (core/derived_metrics.h): TFLOP/s and DRAM GB/s with their % of peak, busy %
// per resource from the engine's busy cycles, the bound rule and its threshold, the limiter.
#include "sim/core/derived_metrics.h"

#include <gtest/gtest.h>

namespace attnsim::core {
namespace {

// 2 SMs x 1000 FLOP/cycle at 2 GHz = 4 TFLOP/s; 8 HBM channels, 1000 GB/s; 2 L2 partitions.
DeviceSpec device() {
  DeviceSpec d;
  d.clock_ghz = 2.0;
  d.sm.count = 2;
  d.sm.tensor_flops_per_cycle = 1000;
  d.hbm.channels = 8;
  d.hbm.bandwidth_gbps = 1000;
  d.l2.partitions = 2;
  return d;
}

double get(const Metrics& m, const char* name) {
  const Metric* x = find_metric(m, name);
  EXPECT_NE(x, nullptr) << name;
  return x ? x->value : -1;
}

// A launch of 1000 cycles = 500 ns.
Metrics launch() {
  return {{"gpu__time_duration.sum", 500}, {"attnsim__cycles", 1000}};
}

TEST(DerivedMetrics, PeaksComeFromTheDevice) {
  EXPECT_DOUBLE_EQ(peak_tflops(device()), 4.0);
  EXPECT_DOUBLE_EQ(peak_dram_gbps(device()), 1000.0);
}

TEST(DerivedMetrics, AttainedTflopsAndPercentOfPeak) {
  Metrics m = launch();
  set_metric(m, "attnsim__flops", 1e6);  // 1e6 FLOP in 500 ns = 2 TFLOP/s
  add_derived_metrics(m, device());
  EXPECT_DOUBLE_EQ(get(m, "attnsim__tflops"), 2.0);
  EXPECT_DOUBLE_EQ(get(m, "attnsim__pct_peak_flops"), 50.0);
}

TEST(DerivedMetrics, DramGbpsCountsReadsAndWrites) {
  Metrics m = launch();
  set_metric(m, "dram__bytes_read.sum", 300'000);
  set_metric(m, "dram__bytes_write.sum", 100'000);  // 400,000 B in 500 ns = 800 GB/s
  add_derived_metrics(m, device());
  EXPECT_DOUBLE_EQ(get(m, "attnsim__dram_gbps"), 800.0);
  EXPECT_DOUBLE_EQ(get(m, "attnsim__pct_peak_dram"), 80.0);
}

TEST(DerivedMetrics, BusyPercentIsBusyCyclesOverInstancesTimesElapsedCycles) {
  Metrics m = launch();
  set_metric(m, "attnsim__dram_busy_cycles", 4000);    // 8 channels x 1000 cycles: 50 %
  set_metric(m, "attnsim__l2_busy_cycles", 1000);      // 2 partitions: 50 %
  set_metric(m, "attnsim__tensor_busy_cycles", 1400);  // 2 SMs: 70 %
  set_metric(m, "attnsim__smem_busy_cycles", 200);     // 10 %
  set_metric(m, "attnsim__lsu_busy_cycles", 600);      // 30 %: smem takes the larger
  set_metric(m, "attnsim__issue_busy_cycles", 100);    // 5 %
  set_metric(m, "attnsim__fp32_busy_cycles", 300);     // 15 %
  set_metric(m, "attnsim__sfu_busy_cycles", 500);      // 25 %: issue takes the largest
  add_derived_metrics(m, device());
  EXPECT_DOUBLE_EQ(get(m, "attnsim__dram_busy_pct"), 50.0);
  EXPECT_DOUBLE_EQ(get(m, "attnsim__l2_busy_pct"), 50.0);
  EXPECT_DOUBLE_EQ(get(m, "attnsim__tensor_busy_pct"), 70.0);
  EXPECT_DOUBLE_EQ(get(m, "attnsim__smem_busy_pct"), 30.0);
  EXPECT_DOUBLE_EQ(get(m, "attnsim__issue_busy_pct"), 25.0);
  EXPECT_EQ(bound_of(m), "tensor");
}

TEST(DerivedMetrics, ScratchpadDmaEnginesCountAsDram) {
  DeviceSpec d = device();
  d.kind = DeviceKind::kScratchpad;
  d.scratchpad.dma_engines = 2;  // 2 cores x 2 engines
  Metrics m = launch();
  set_metric(m, "attnsim__dma_busy_cycles", 3000);  // 75 %
  set_metric(m, "attnsim__dram_busy_cycles", 800);  // 10 %
  add_derived_metrics(m, d);
  EXPECT_DOUBLE_EQ(get(m, "attnsim__dram_busy_pct"), 75.0);
  EXPECT_EQ(bound_of(m), "dram");
}

TEST(DerivedMetrics, BelowTheThresholdIsLatency) {
  Metrics m = launch();
  set_metric(m, "attnsim__dram_busy_cycles", 8 * 1000 * 0.59);  // 59 %: the busiest, but below 60 %
  add_derived_metrics(m, device());
  EXPECT_EQ(bound_of(m), "latency");
  set_metric(m, "attnsim__dram_busy_cycles", 8 * 1000 * 0.60);  // exactly at the threshold
  add_derived_metrics(m, device());
  EXPECT_EQ(bound_of(m), "dram");
}

TEST(DerivedMetrics, TiesGoToTheFirstResourceInOrder) {
  Metrics m = launch();
  set_metric(m, "attnsim__l2_busy_cycles", 1600);      // 80 %
  set_metric(m, "attnsim__tensor_busy_cycles", 1600);  // 80 %
  add_derived_metrics(m, device());
  EXPECT_EQ(bound_of(m), "l2");
}

TEST(DerivedMetrics, NoBusyMetricsNoBound) {
  EXPECT_EQ(bound_of(launch()), "");
  Metrics m = launch();
  add_derived_metrics(m, device());  // counters missing count as 0: nothing busy
  EXPECT_EQ(bound_of(m), "latency");
}

TEST(DerivedMetrics, ZeroTimeGivesZeroRatesNotInfinities) {
  Metrics m{{"attnsim__flops", 10}};
  add_derived_metrics(m, device());
  EXPECT_EQ(get(m, "attnsim__tflops"), 0.0);
  EXPECT_EQ(get(m, "attnsim__dram_busy_pct"), 0.0);
}

TEST(DerivedMetrics, RecomputingReplacesInsteadOfAppending) {
  Metrics m = launch();
  set_metric(m, "attnsim__flops", 1e6);
  add_derived_metrics(m, device());
  const std::size_t n = m.size();
  set_metric(m, "attnsim__flops", 2e6);
  add_derived_metrics(m, device());
  EXPECT_EQ(m.size(), n);
  EXPECT_DOUBLE_EQ(get(m, "attnsim__tflops"), 4.0);
}

TEST(OccupancyLimiter, SmallestLimitWithTiesInComputeOccupancyOrder) {
  Metrics m{{"launch__occupancy_limit_blocks", 32},
            {"launch__occupancy_limit_registers", 4},
            {"launch__occupancy_limit_shared_mem", 2},
            {"launch__occupancy_limit_warps", 8}};
  EXPECT_EQ(occupancy_limiter_of(m), "shared_mem");
  set_metric(m, "launch__occupancy_limit_registers", 2);
  EXPECT_EQ(occupancy_limiter_of(m), "registers");
  set_metric(m, "launch__occupancy_limit_warps", 1);
  EXPECT_EQ(occupancy_limiter_of(m), "warps");
  EXPECT_EQ(occupancy_limiter_of(launch()), "");
}

}  // namespace
}  // namespace attnsim::core
