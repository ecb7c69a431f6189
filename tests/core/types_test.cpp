#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/core/tile_op.h"
#include "sim/core/types.h"

namespace attnsim::core {

TEST(DType, BytesPerValueAndNamesRoundTrip) {
  for (auto t : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kFp8}) {
    EXPECT_EQ(parse_dtype(to_string(t)), t);
  }
  EXPECT_EQ(bytes_per_value(DType::kFp16), 2u);
  EXPECT_EQ(bytes_per_value(DType::kFp8), 1u);
  EXPECT_FALSE(parse_dtype("fp64").has_value());
}

TEST(Tensor, NamesRoundTrip) {
  for (std::size_t i = 0; i < kNumTensors; ++i) {
    auto t = static_cast<Tensor>(i);
    EXPECT_EQ(parse_tensor(to_string(t)), t);
  }
}

TEST(ConfigProblem, FormatsFileLineKeyMessage) {
  ConfigProblem p{"dev.yaml", 7, "l2.capacity_bytes", "must be >= 0"};
  EXPECT_EQ(p.format(), "dev.yaml:7: l2.capacity_bytes: must be >= 0");
  ConfigError e({p, ConfigProblem{"", 0, "--seq", "required"}});
  EXPECT_EQ(std::string(e.what()), "dev.yaml:7: l2.capacity_bytes: must be >= 0\n--seq: required");
}

}  // namespace attnsim::core
