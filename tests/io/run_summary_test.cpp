// The text report's helpers: units from metric names, durations with a unit, and the summary
// block that opens the report (io/run_summary.h).
#include "sim/io/run_summary.h"

#include <gtest/gtest.h>

#include <sstream>

#include "io_test_util.h"
#include "sim/core/derived_metrics.h"

namespace attnsim::io {
namespace {

TEST(RunSummary, MetricUnitsFollowTheNames) {
  EXPECT_EQ(metric_unit("gpu__time_duration.sum"), "ns");
  EXPECT_EQ(metric_unit("dram__bytes_read.sum"), "B");
  EXPECT_EQ(metric_unit("launch__shared_mem_per_block"), "B");
  EXPECT_EQ(metric_unit("dram__bytes.sum.per_second"), "B/s");
  EXPECT_EQ(metric_unit("lts__t_sector_hit_rate.pct"), "%");
  EXPECT_EQ(metric_unit("sm__maximum_warps_per_active_cycle_pct"), "%");
  EXPECT_EQ(metric_unit("attnsim__pct_peak_dram"), "%");
  EXPECT_EQ(metric_unit("attnsim__cycles"), "cycles");
  EXPECT_EQ(metric_unit("attnsim__tensor_busy_cycles"), "cycles");
  EXPECT_EQ(metric_unit("attnsim__tflops"), "TFLOP/s");
  EXPECT_EQ(metric_unit("attnsim__dram_gbps"), "GB/s");
  EXPECT_EQ(metric_unit("attnsim__flops"), "FLOP");
  EXPECT_EQ(metric_unit("attnsim__events"), "");
}

TEST(RunSummary, DurationsCarryAUnit) {
  EXPECT_EQ(format_duration_ns(845), "845 ns");
  EXPECT_EQ(format_duration_ns(1000.25), "1.00 \u00b5s");
  EXPECT_EQ(format_duration_ns(22'912), "22.9 \u00b5s");
  EXPECT_EQ(format_duration_ns(1'382'690), "1.38 ms");
  EXPECT_EQ(format_duration_ns(2.5e9), "2.50 s");
}

// A device of one SM at 1 GHz named "teaching", for the summary's lines.
core::DeviceSpec one_sm_device() {
  core::DeviceSpec d;
  d.name = "teaching";
  d.clock_ghz = 1.0;
  d.sm.count = 1;
  return d;
}

TEST(RunSummary, ReportOpensWithTheSummaryOfTheRunAndItsLongestLaunch) {
  core::RunResult r = testing::small_result();
  core::DeviceSpec d = one_sm_device();
  d.sm.tensor_flops_per_cycle = 1000;  // 1 TFLOP/s
  d.hbm.bandwidth_gbps = 100;
  core::set_metric(r.metrics, "attnsim__flops", 1.00025e6);  // in 2000.5 ns: 500 FLOP/ns = 0.5 TFLOP/s
  core::set_metric(r.metrics, "attnsim__cycles", 2000.5);
  core::set_metric(r.metrics, "attnsim__tensor_busy_cycles", 1400.35);  // 70 % of 1 SM
  core::add_derived_metrics(r.metrics, d);
  core::set_metric(r.kernels[1].metrics, "gpu__time_duration.sum", 5000);  // the longest launch
  core::set_metric(r.kernels[1].metrics, "launch__occupancy_limit_warps", 4);
  core::set_metric(r.kernels[1].metrics, "launch__occupancy_limit_blocks", 8);
  r.kernels[1].occupancy_limiter = "shared_mem";
  std::ostringstream out;
  print_run_summary(r, d, out, "a rule");
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("summary (flash2 on teaching)\ntime       2.00 \u00b5s (2 launches, each timed alone)\n", 0), 0u) << s;
  EXPECT_NE(s.find("\ncompute    0.5 TFLOP/s = 50.0 % of peak (1.0 TFLOP/s)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\nDRAM       4.1 GB/s = 4.1 % of peak (100 GB/s)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\nbound by   tensor (busy: dram 0 %, l2 0 %, smem 0 %, tensor 70 %, issue 0 %;"), std::string::npos)
      << s;
  EXPECT_NE(s.find("(1 CTA per SM), limited by shared_mem; "), std::string::npos) << s;
  EXPECT_NE(s.find("(longest launch: flash2_bwd)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\n           a rule\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("\nsampled "), std::string::npos) << s;  // a full run
  // Then the workload and the Nsight-Compute-named table.
  EXPECT_LT(s.find("bound by"), s.find("\ndevice: teaching\n"));
  EXPECT_LT(s.find("\ndevice: teaching\n"), s.find("\nmetric  "));
  // With l2.carry_writeback the launches run back to back (each one's final write-back on the
  // next one's HBM channels).
  core::DeviceSpec carried = d;
  carried.l2.carry_writeback = true;
  std::ostringstream out2;
  print_run_summary(r, carried, out2, "a rule");
  EXPECT_EQ(out2.str().rfind("summary (flash2 on teaching)\ntime       2.00 \u00b5s (2 launches back to back)\n", 0), 0u)
      << out2.str();
}

// Sampled runs: the fraction simulated, and for each launch in which nothing was skipped, why.
TEST(RunSummary, SampledRunsSayWhyALaunchRanInFull) {
  core::RunResult r = testing::small_result();
  const core::DeviceSpec d = one_sm_device();
  core::set_metric(r.metrics, "attnsim__sim_mode", 1);
  core::set_metric(r.metrics, "attnsim__sampled_fraction", 0.5);
  r.kernels[0].totals.in_full_because = "its CTAs run in clusters";
  std::ostringstream out;
  print_run_summary(r, d, out, "");
  const std::string s = out.str();
  EXPECT_NE(s.find("\nsampled    50.00 % of the ops simulated (the rest: memory accesses warmed, time extrapolated)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("\n           in full (" + r.kernels[0].name + "): its CTAs run in clusters (docs/sampling.md)\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("in full (" + r.kernels[1].name + ")"), std::string::npos) << s;
  // CTAs skipped whole, over all launches.
  r.kernels[0].totals.ctas = 1000, r.kernels[1].totals.ctas = 2000;
  r.kernels[1].totals.ctas_skipped = 1500;
  std::ostringstream again;
  print_run_summary(r, d, again, "");
  EXPECT_NE(again.str().find("extrapolated; 1,500 of 3,000 CTAs skipped whole, counted as their reference CTA); "),
            std::string::npos)
      << again.str();
  // CTAs that fast-forwarded, and CTAs whose loops were extrapolated in their middle.
  r.kernels[1].totals.ctas_fast_forwarded = 264;
  r.kernels[1].totals.ctas_extrapolated = 528;
  std::ostringstream third;
  print_run_summary(r, d, third, "");
  EXPECT_NE(third.str().find("counted as their reference CTA, 264 more after their warm-up steps; the middle of 528 "
                             "CTAs' loops extrapolated, memory counts included); "),
            std::string::npos)
      << third.str();
}

}  // namespace
}  // namespace attnsim::io
