#include "sim/io/point_record.h"

#include <gtest/gtest.h>

#include "io_test_util.h"

namespace attnsim::io {
namespace {

TEST(PointRecord, RoundTripKeepsEveryValueExactly) {
  PointRecord p = testing::ok_point(7, 64);
  p.params.push_back({"ratio", 0.1 + 0.2});
  p.params.push_back({"causal", true});
  p.reason = "multi\nline: reason";
  p.result->functional_max_rel_error = 1.0 / 3.0;
  const PointRecord q = parse_point(serialize_point(p));
  EXPECT_EQ(q.index, 7u);
  EXPECT_EQ(q.reason, p.reason);
  ASSERT_EQ(q.params.size(), 4u);
  EXPECT_EQ(std::get<double>(q.params[2].value), 0.1 + 0.2);
  EXPECT_EQ(std::get<bool>(q.params[3].value), true);
  EXPECT_EQ(std::get<std::string>(q.params[1].value), "teaching");
  ASSERT_TRUE(q.result);
  EXPECT_EQ(q.result->kernels.size(), 2u);
  EXPECT_EQ(q.result->kernels[1].name, "flash2_bwd");
  EXPECT_EQ(q.result->kernels[0].series.columns[1][2], 0.1);
  EXPECT_EQ(q.result->tensors.dram[core::Tensor::kO].write, 4096u);
  EXPECT_EQ(*q.result->functional_max_rel_error, 1.0 / 3.0);
  EXPECT_FALSE(q.result->functional_rmse);
  EXPECT_EQ(serialize_point(q), serialize_point(p));
  p.result->functional_rmse = 0.0091;  // with the rmse, and without it (records written before it)
  const PointRecord r = parse_point(serialize_point(p));
  EXPECT_EQ(*r.result->functional_max_rel_error, 1.0 / 3.0);
  EXPECT_EQ(*r.result->functional_rmse, 0.0091);
  EXPECT_EQ(serialize_point(r), serialize_point(p));
}

TEST(PointRecord, KeepsEachKernelsOccupancyLimiter) {
  PointRecord p = testing::ok_point(2, 64);
  p.result->kernels[1].occupancy_limiter = "warps";
  const PointRecord q = parse_point(serialize_point(p));
  EXPECT_EQ(q.result->kernels[0].occupancy_limiter, "shared_mem");
  EXPECT_EQ(q.result->kernels[1].occupancy_limiter, "warps");
}

TEST(PointRecord, VersionOneRecordsDeriveTheLimiterFromTheLimits) {
  // A record as version 1 wrote it: no limiter after each kernel's series.
  PointRecord p = testing::ok_point(2, 64);
  for (auto& k : p.result->kernels) {
    core::set_metric(k.metrics, "launch__occupancy_limit_warps", 8);
    core::set_metric(k.metrics, "launch__occupancy_limit_blocks", 32);
  }
  std::string s = serialize_point(p);
  const std::string v2 = "16:attnsim-point-v2\n", limiter = "\n10:shared_mem\n";
  ASSERT_EQ(s.rfind(v2, 0), 0u);
  s.replace(0, v2.size(), "16:attnsim-point-v1\n");
  for (std::size_t at; (at = s.find(limiter)) != std::string::npos;) s.replace(at, limiter.size(), "\n");
  const PointRecord q = parse_point(s);
  ASSERT_TRUE(q.result);
  // Limits: registers 2, shared_mem 1, warps 8, blocks 32: shared memory binds.
  EXPECT_EQ(q.result->kernels[0].occupancy_limiter, "shared_mem");
  EXPECT_EQ(q.result->kernels[1].name, "flash2_bwd");
}

TEST(PointRecord, TruncatedRecordIsRejected) {
  const std::string s = serialize_point(testing::ok_point(1, 32));
  EXPECT_THROW(parse_point(s.substr(0, s.size() - 3)), std::runtime_error);
}

TEST(PointRecord, ImpossiblePointHasNoResult) {
  const PointRecord q = parse_point(serialize_point(testing::impossible_point(3, 16)));
  EXPECT_EQ(q.status, "impossible");
  EXPECT_FALSE(q.result.has_value());
}

}  // namespace
}  // namespace attnsim::io
