#include "sim/config/sweep_expander.h"

#include <gtest/gtest.h>

#include "sim/config/sweep_loader.h"
#include "sim/core/errors.h"

namespace attnsim::config {
namespace {

const std::string kBase = "device: teaching\nbase:\n  kernel: flash2\n  seq: 256\n  head_dim: 32\n";

std::int64_t param(const SweepPoint& p, const std::string& k) {
  for (const auto& [n, v] : p.params)
    if (n == k) return std::get<std::int64_t>(v);
  throw std::runtime_error("no param " + k);
}

TEST(SweepExpander, LastAxisVariesFastest) {
  const SweepSpec s = SweepLoader::load_text(kBase + "axes:\n  block_m: [32, 64]\n  block_n: [16, 32, 64]\n", "s");
  const SweepExpander x(s);
  ASSERT_EQ(x.size(), 6u);
  EXPECT_EQ(param(x.point(1), "block_m"), 32);
  EXPECT_EQ(param(x.point(1), "block_n"), 32);
  EXPECT_EQ(param(x.point(3), "block_m"), 64);
  EXPECT_EQ(param(x.point(3), "block_n"), 16);
  EXPECT_EQ(x.point(3).workload.block_m, 64u);
}

TEST(SweepExpander, ZippedAxesVaryTogether) {
  const SweepSpec s = SweepLoader::load_text(kBase + "axes:\n  zip:\n    seq_q: [128, 512]\n    seq_kv: [256, 1024]\n", "s");
  const SweepExpander x(s);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x.point(1).workload.seq_q, 512u);
  EXPECT_EQ(x.point(1).workload.seq_kv, 1024u);
}

TEST(SweepExpander, FailedConstraintIsImpossibleWithReason) {
  const SweepSpec s = SweepLoader::load_text(
      kBase + "axes:\n  block_m: [32, 64]\n  block_n: [64]\nconstraints:\n  - block_n <= block_m\n", "s");
  const SweepExpander x(s);
  const SweepPoint p0 = x.point(0), p1 = x.point(1);
  EXPECT_FALSE(p0.possible);
  EXPECT_EQ(p0.reason, "constraint 'block_n <= block_m' is false (block_n=64, block_m=32)");
  EXPECT_TRUE(p1.possible);
}

TEST(SweepExpander, DerivedValueFollowsAxis) {
  const SweepSpec s = SweepLoader::load_text(kBase + "axes:\n  seq_q: [128, 256]\nderived:\n  seq_kv: \"{seq_q * 2}\"\n", "s");
  const SweepExpander x(s);
  EXPECT_EQ(x.point(1).workload.seq_kv, 512u);
  EXPECT_EQ(param(x.point(1), "seq_kv"), 512);
}

TEST(SweepExpander, DeviceOverrideAxisReachesDeviceSpec) {
  const SweepSpec s = SweepLoader::load_text(kBase + "axes:\n  device.l2.capacity_bytes: [0]\n", "s");
  const SweepExpander x(s);
  const SweepPoint p = x.point(0);
  ASSERT_TRUE(p.possible) << p.reason;
  EXPECT_EQ(p.device->l2.capacity_bytes, 0u);
  EXPECT_NE(p.config_yaml.find("l2.capacity_bytes: 0"), std::string::npos);
}

TEST(SweepExpander, DeviceAppearsAsParameter) {
  const SweepSpec s = SweepLoader::load_text(kBase, "s");
  const SweepExpander x(s);
  const SweepPoint p = x.point(0);
  ASSERT_EQ(p.params.size(), 1u);
  EXPECT_EQ(p.params[0].first, "device");
  EXPECT_EQ(std::get<std::string>(p.params[0].second), "teaching");
}

TEST(SweepExpander, UnknownDevicePresetIsConfigError) {
  const SweepSpec s = SweepLoader::load_text(kBase + "axes:\n  device: [teaching, no-such-gpu]\n", "s");
  EXPECT_THROW(SweepExpander{s}, core::ConfigError);
}

TEST(SweepExpander, InvalidPointWorkloadIsImpossibleNotFatal) {
  const SweepSpec s = SweepLoader::load_text(kBase + "axes:\n  heads: [4]\n  kv_heads: [4, 3]\n", "s");
  const SweepExpander x(s);
  EXPECT_TRUE(x.point(0).possible);
  EXPECT_FALSE(x.point(1).possible);
  EXPECT_FALSE(x.point(1).reason.empty());
}

TEST(SweepExpander, UnknownBaseKeyIsConfigError) {
  // Found when the file is read, at the key's own line and with its full path.
  try {
    SweepLoader::load_text("device: teaching\nbase:\n  kernal: flash2\n", "s");
    FAIL() << "expected a ConfigError";
  } catch (const core::ConfigError& e) {
    EXPECT_STREQ(e.what(), "s:3: base.kernal: unknown key (did you mean 'kernel'?)");
  }
}

}  // namespace
}  // namespace attnsim::config
