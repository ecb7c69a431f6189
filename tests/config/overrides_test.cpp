// --set key=value parsing, the device./workload split and writing into a YAML tree.
#include "sim/config/overrides.h"

#include <gtest/gtest.h>

#include "sim/core/errors.h"

namespace attnsim::config {
namespace {

TEST(Overrides, ParsesKeyAndValue) {
  const auto o = parse_overrides({"device.l2.capacity_bytes=0", "seq = 4096"});
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].key, "device.l2.capacity_bytes");
  EXPECT_EQ(o[0].value, "0");
  EXPECT_EQ(o[1].key, "seq");
  EXPECT_EQ(o[1].value, "4096");
}

TEST(Overrides, ValueMayContainEquals) {
  const auto o = parse_overrides({"name=a=b"});
  EXPECT_EQ(o[0].value, "a=b");
}

TEST(Overrides, MissingEqualsNamesSet) {
  try {
    parse_overrides({"seq4096"});
    FAIL();
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(e.problems()[0].key_path, "--set");
  }
}

TEST(Overrides, EmptyPathSegmentIsRejected) {
  EXPECT_THROW(parse_overrides({"device..l2=1"}), core::ConfigError);
  EXPECT_THROW(parse_overrides({"=1"}), core::ConfigError);
}

TEST(Overrides, EmptyValueIsRejected) { EXPECT_THROW(parse_overrides({"seq="}), core::ConfigError); }

TEST(Overrides, SplitStripsDevicePrefix) {
  std::vector<Override> workload, device;
  split_overrides({{"device.l2.capacity_bytes", "0"}, {"seq", "64"}, {"devices", "x"}}, workload, device);
  ASSERT_EQ(device.size(), 1u);
  EXPECT_EQ(device[0].key, "l2.capacity_bytes");
  ASSERT_EQ(workload.size(), 2u);
  EXPECT_EQ(workload[1].key, "devices");
}

TEST(Overrides, ApplyCreatesNestedKeysAndParsesYamlValues) {
  YAML::Node root = YAML::Load("l2:\n  capacity_bytes: 5\n");
  YamlReader reader("f.yaml");
  apply_overrides(root, {{"l2.capacity_bytes", "0"}, {"sm.count", "4"}, {"sm.shared_mem_carveouts_bytes", "[0, 8192]"}},
                  reader);
  EXPECT_FALSE(reader.has_problems());
  EXPECT_EQ(root["l2"]["capacity_bytes"].as<int>(), 0);
  EXPECT_EQ(root["sm"]["count"].as<int>(), 4);
  EXPECT_EQ(root["sm"]["shared_mem_carveouts_bytes"].size(), 2u);
}

TEST(Overrides, PathThroughScalarIsAProblem) {
  YAML::Node root = YAML::Load("l2: 5\n");
  YamlReader reader("f.yaml");
  apply_overrides(root, {{"l2.capacity_bytes", "0"}}, reader);
  ASSERT_TRUE(reader.has_problems());
  EXPECT_EQ(reader.problems()[0].key_path, "--set l2.capacity_bytes");
}

}  // namespace
}  // namespace attnsim::config
