// A null axis value (`~`, `null`) leaves its key unset at that point: the resolved workload (or
// device) is the one without the key, even when base or set give it; null in base or set is bad input.
#include <gtest/gtest.h>

#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"
#include "sweep_errors.h"

namespace attnsim::config {
namespace {

using testing::error_of;

// The resolved workload of a sweep's point, as the YAML the results file keeps.
std::string resolved(const std::string& text, std::uint64_t index) {
  const SweepSpec s = SweepLoader::load_text(text, "s.yaml");
  const SweepExpander x(s);
  const SweepPoint p = x.point(index);
  EXPECT_TRUE(p.possible) << p.reason;
  return workload_to_yaml(p.workload);
}

const SweepValue* param(const SweepPoint& p, const std::string& k) {
  for (const auto& [n, v] : p.params)
    if (n == k) return &v;
  return nullptr;
}

const std::string kHead = "device: teaching\nbase:\n  kernel: flash2\n  seq: 256\n  head_dim: 32\n";

TEST(SweepNull, PlainAxisNullLeavesKeyAtItsDefault) {
  const std::string with_null = kHead + "axes:\n  block_m: [32, ~, null]\n";
  const std::string without_key = kHead + "axes:\n  heads: [1]\n";
  EXPECT_EQ(resolved(with_null, 1), resolved(without_key, 0));
  EXPECT_EQ(resolved(with_null, 2), resolved(without_key, 0));
  EXPECT_NE(resolved(with_null, 0), resolved(without_key, 0));  // 32 is not the default
  const SweepSpec s = SweepLoader::load_text(with_null, "s.yaml");
  const SweepPoint p = SweepExpander(s).point(1);
  ASSERT_NE(param(p, "block_m"), nullptr);
  EXPECT_TRUE(is_unset(*param(p, "block_m")));
  EXPECT_EQ(sweep_value_yaml(*param(p, "block_m")), "~");
}

TEST(SweepNull, ZippedAxisNullLeavesKeysAtTheKernelsDefaults) {
  const std::string zipped = "device: teaching\nbase:\n  seq: 256\n  head_dim: 32\naxes:\n  zip:\n"
                             "    kernel: [flash2, standard]\n    block_m: [64, ~]\n    block_n: [32, ~]\n"
                             "    warps: [8, ~]\n    stages: [3, ~]\n";
  const std::string standard = "device: teaching\nbase:\n  seq: 256\n  head_dim: 32\naxes:\n  kernel: [standard]\n";
  const std::string flash2 = "device: teaching\nbase:\n  seq: 256\n  head_dim: 32\n  block_m: 64\n  block_n: 32\n"
                             "  warps: 8\n  stages: 3\naxes:\n  kernel: [flash2]\n";
  EXPECT_EQ(resolved(zipped, 1), resolved(standard, 0));
  EXPECT_EQ(resolved(zipped, 0), resolved(flash2, 0));
}

TEST(SweepNull, NullUnsetsAKeyGivenInBaseOrSet) {
  const std::string without_key = kHead + "axes:\n  heads: [1]\n";
  const std::string in_base = kHead + "  block_m: 32\naxes:\n  block_m: [~, 64]\n";
  const std::string in_set = kHead + "set:\n  block_m: 32\naxes:\n  block_m: [~, 64]\n";
  EXPECT_EQ(resolved(in_base, 0), resolved(without_key, 0));
  EXPECT_EQ(resolved(in_set, 0), resolved(without_key, 0));
  EXPECT_NE(resolved(in_base, 1), resolved(without_key, 0));
}

TEST(SweepNull, DeviceOverrideAxisNullKeepsThePresetValue) {
  const SweepSpec s = SweepLoader::load_text(kHead + "set:\n  device.l2.capacity_bytes: 1024\n"
                                                      "axes:\n  device.l2.capacity_bytes: [0, ~]\n", "s.yaml");
  const SweepSpec plain = SweepLoader::load_text(kHead + "axes:\n  heads: [1]\n", "s.yaml");
  const SweepExpander x(s), y(plain);
  const SweepPoint p0 = x.point(0), p1 = x.point(1), ref = y.point(0);
  ASSERT_TRUE(p0.possible && p1.possible && ref.possible) << p0.reason << p1.reason;
  EXPECT_EQ(p0.device->l2.capacity_bytes, 0u);
  EXPECT_GT(ref.device->l2.capacity_bytes, 1024u);
  EXPECT_EQ(p1.device->l2.capacity_bytes, ref.device->l2.capacity_bytes);
}

TEST(SweepNull, ExpressionsSeeAnUnsetKeyAsUnknown) {
  const SweepSpec s = SweepLoader::load_text(kHead + "axes:\n  block_m: [64, ~]\nconstraints:\n  - block_m >= 32\n",
                                             "s.yaml");
  const SweepExpander x(s);
  EXPECT_TRUE(x.point(0).possible);
  const SweepPoint p = x.point(1);
  EXPECT_FALSE(p.possible);
  EXPECT_NE(p.reason.find("'block_m' is not a known integer key"), std::string::npos) << p.reason;
}

TEST(SweepNull, NullInBaseOrSetIsBadInputNamingItsLine) {
  const std::string b = error_of(kHead + "  block_m: ~\naxes:\n  heads: [1]\n");
  EXPECT_NE(b.find("s.yaml:6: base.block_m: got nothing (null): leave the key out"), std::string::npos) << b;
  const std::string s = error_of(kHead + "set:\n  warps: null\naxes:\n  heads: [1]\n");
  EXPECT_NE(s.find("s.yaml:7: set.warps: got nothing (null): leave the key out"), std::string::npos) << s;
}

TEST(SweepNull, NullDeviceAxisValueIsBadInput) {
  const std::string e = error_of(kHead + "axes:\n  device: [teaching, ~]\n");
  EXPECT_NE(e.find("s.yaml:7: axes.device[1]: a device axis needs a preset name"), std::string::npos) << e;
}

TEST(SweepNull, ZeroStaysInvalidNextToNull) {
  const std::string e = error_of(kHead + "axes:\n  zip:\n    block_m: [~, 0]\n    warps: [~, 4]\n");
  EXPECT_NE(e.find("s.yaml:8: axes.zip.block_m[1]: expected a positive integer, got 0"), std::string::npos) << e;
  EXPECT_EQ(e.find("block_m[0]"), std::string::npos) << e;
  EXPECT_EQ(e.find("warps"), std::string::npos) << e;
}

// The sweep scripts/measure_cuda.sh generates: its standard rows leave the flash tile keys unset.
TEST(SweepNull, ValidationSweepLoadsWithStandardRowsAtTheirDefaults) {
  const SweepSpec s = SweepLoader::load_file(std::string(ATTNSIM_SOURCE_DIR) + "/experiments/validation/sweep.yaml");
  const SweepExpander x(s);
  int standard = 0;
  for (std::uint64_t i = 0; i < x.size(); ++i) {
    const SweepPoint p = x.point(i);
    ASSERT_TRUE(p.possible) << i << ": " << p.reason;
    if (p.workload.kernel != "standard") continue;
    ++standard;
    for (const char* k : {"block_m", "block_n", "warps", "stages"}) {
      ASSERT_NE(param(p, k), nullptr) << k;
      EXPECT_TRUE(is_unset(*param(p, k))) << i << ": " << k;
    }
    const std::string plain = "device: h200\nbase:\n  kernel: standard\n  dtype: fp16\n  pass: fwd\n  batch: " +
                              std::to_string(p.workload.batch) + "\n  heads: " + std::to_string(p.workload.heads) +
                              "\n  seq: " + std::to_string(p.workload.seq_q) +
                              "\n  head_dim: " + std::to_string(p.workload.head_dim) + "\naxes:\n  causal: [false]\n";
    EXPECT_EQ(workload_to_yaml(p.workload), resolved(plain, 0)) << i;
  }
  EXPECT_EQ(standard, 2);
}

}  // namespace
}  // namespace attnsim::config
