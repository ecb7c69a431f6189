#include "sim/io/results_table.h"

#include <gtest/gtest.h>

#include <cmath>

#include "io_test_util.h"

namespace attnsim::io {
namespace {

TEST(ResultsTable, ImpossibleRowHasNaNMetrics) {
  const auto cols = table_columns({testing::ok_point(0, 64), testing::impossible_point(1, 128)});
  const Column* dram = nullptr;
  for (const auto& c : cols)
    if (c.name == "dram__bytes_read.sum") dram = &c;
  ASSERT_NE(dram, nullptr);
  EXPECT_EQ(std::get<double>(dram->cells[0]), 8192.0 * 64);
  EXPECT_TRUE(std::isnan(std::get<double>(dram->cells[1])));
}

TEST(ResultsTable, FixedColumnsComeFirstThenParamsThenMetrics) {
  const auto cols = table_columns({testing::ok_point(0, 64)});
  ASSERT_EQ(cols.size(), 12u);
  EXPECT_EQ(cols[0].name, "point_index");
  EXPECT_EQ(cols[1].name, "status");
  EXPECT_EQ(cols[2].name, "reason");
  EXPECT_EQ(cols[3].name, "block_m");
  EXPECT_EQ(cols[4].name, "device");
  EXPECT_EQ(cols[5].name, "dram__bytes_read.sum");
  EXPECT_EQ(cols[6].name, "gpu__time_duration.sum");
  // The longest launch's launch__* metrics (here one), then the three text columns.
  EXPECT_EQ(cols[7].name, "launch__occupancy_limit_registers");
  EXPECT_EQ(cols[8].name, "launch__occupancy_limit_shared_mem");
  EXPECT_EQ(cols[9].name, "attnsim__bound");
  EXPECT_EQ(cols[10].name, "attnsim__occupancy_limiter");
  EXPECT_EQ(cols[11].name, "attnsim__longest_launch");
}

const Column& column(const std::vector<Column>& cols, const std::string& name) {
  for (const auto& c : cols)
    if (c.name == name) return c;
  ADD_FAILURE() << "no column " << name;
  static const Column none;
  return none;
}

// A run of two launches where the second is the longer: its occupancy columns fill the row.
PointRecord two_launch_point() {
  PointRecord p = testing::ok_point(0, 64);
  auto& k = p.result->kernels;
  core::set_metric(k[0].metrics, "gpu__time_duration.sum", 100);
  core::set_metric(k[1].metrics, "gpu__time_duration.sum", 900);
  core::set_metric(k[0].metrics, "launch__occupancy_limit_registers", 3);
  core::set_metric(k[1].metrics, "launch__occupancy_limit_registers", 1);
  core::set_metric(k[1].metrics, "launch__waves_per_multiprocessor", 2.5);
  core::set_metric(k[0].metrics, "sm__warps_active.avg.pct_of_peak_sustained_active", 90);
  core::set_metric(k[1].metrics, "sm__warps_active.avg.pct_of_peak_sustained_active", 20);
  k[0].occupancy_limiter = "warps";
  k[1].occupancy_limiter = "registers";
  core::set_metric(p.result->metrics, "sm__warps_active.avg.pct_of_peak_sustained_active", 27);  // time-weighted
  core::set_metric(p.result->metrics, "attnsim__dram_busy_pct", 75);
  core::set_metric(p.result->metrics, "attnsim__tensor_busy_pct", 10);
  return p;
}

TEST(ResultsTable, OccupancyColumnsAreTheLongestLaunchs) {
  const auto cols = table_columns({two_launch_point(), testing::impossible_point(1, 128)});
  EXPECT_EQ(std::get<double>(column(cols, "launch__occupancy_limit_registers").cells[0]), 1.0);
  EXPECT_EQ(std::get<double>(column(cols, "launch__waves_per_multiprocessor").cells[0]), 2.5);
  EXPECT_EQ(std::get<double>(column(cols, "sm__warps_active.avg.pct_of_peak_sustained_active").cells[0]), 20.0);
  EXPECT_EQ(std::get<std::string>(column(cols, "attnsim__occupancy_limiter").cells[0]), "registers");
  EXPECT_EQ(std::get<std::string>(column(cols, "attnsim__longest_launch").cells[0]), "flash2_bwd");
  EXPECT_TRUE(std::isnan(std::get<double>(column(cols, "launch__occupancy_limit_registers").cells[1])));
  EXPECT_EQ(std::get<std::string>(column(cols, "attnsim__occupancy_limiter").cells[1]), "");
}

TEST(ResultsTable, BoundColumnIsTheRunsBound) {
  const auto cols = table_columns({two_launch_point(), testing::impossible_point(1, 128)});
  EXPECT_EQ(std::get<std::string>(column(cols, "attnsim__bound").cells[0]), "dram");
  EXPECT_EQ(std::get<std::string>(column(cols, "attnsim__bound").cells[1]), "");
}

TEST(ResultsTable, NoTextColumnsWithoutAnyResult) {
  const auto cols = table_columns({testing::impossible_point(0, 128)});
  for (const auto& c : cols) EXPECT_NE(c.name, "attnsim__bound");
}

TEST(ResultsTable, MixedIntAndRealColumnIsReal) {
  EXPECT_EQ(column_type(Column{"x", {std::int64_t{1}, 2.5}}), ColumnType::kFloat64);
  EXPECT_EQ(column_type(Column{"x", {std::int64_t{1}, std::int64_t{2}}}), ColumnType::kInt64);
  EXPECT_EQ(column_type(Column{"x", {std::int64_t{1}, std::string("a")}}), ColumnType::kString);
  EXPECT_EQ(column_type(Column{"x", {true, false}}), ColumnType::kBool);
}

}  // namespace
}  // namespace attnsim::io
