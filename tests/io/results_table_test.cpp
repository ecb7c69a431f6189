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
  ASSERT_EQ(cols.size(), 7u);
  EXPECT_EQ(cols[0].name, "point_index");
  EXPECT_EQ(cols[1].name, "status");
  EXPECT_EQ(cols[2].name, "reason");
  EXPECT_EQ(cols[3].name, "block_m");
  EXPECT_EQ(cols[4].name, "device");
  EXPECT_EQ(cols[5].name, "dram__bytes_read.sum");
  EXPECT_EQ(cols[6].name, "gpu__time_duration.sum");
}

TEST(ResultsTable, MixedIntAndRealColumnIsReal) {
  EXPECT_EQ(column_type(Column{"x", {std::int64_t{1}, 2.5}}), ColumnType::kFloat64);
  EXPECT_EQ(column_type(Column{"x", {std::int64_t{1}, std::int64_t{2}}}), ColumnType::kInt64);
  EXPECT_EQ(column_type(Column{"x", {std::int64_t{1}, std::string("a")}}), ColumnType::kString);
  EXPECT_EQ(column_type(Column{"x", {true, false}}), ColumnType::kBool);
}

}  // namespace
}  // namespace attnsim::io
