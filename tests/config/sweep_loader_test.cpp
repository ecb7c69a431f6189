#include "sim/config/sweep_loader.h"

#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sweep_errors.h"

namespace attnsim::config {
namespace {

using testing::error_of;

std::vector<std::int64_t> ints(const SweepAxis& a) {
  std::vector<std::int64_t> v;
  for (const auto& x : a.values) v.push_back(std::get<std::int64_t>(x));
  return v;
}

TEST(SweepLoader, UnknownTopLevelKeyNamesFileLineAndKey) {
  EXPECT_NE(error_of("device: teaching\nbase: {kernel: flash2}\naxis:\n  block_m: [64]\n").find("s.yaml:3: axis: unknown key"),
            std::string::npos);
}

TEST(SweepLoader, EmptyAxisIsAnError) {
  EXPECT_NE(error_of("device: teaching\naxes:\n  block_m: []\n").find("s.yaml:3: axes.block_m: empty axis"),
            std::string::npos);
}

TEST(SweepLoader, DuplicateAxisIsAnError) {
  const std::string e = error_of("device: teaching\naxes:\n  block_m: [64]\n  zip:\n    block_m: [32]\n    block_n: [32]\n");
  EXPECT_NE(e.find("s.yaml:5: axes.zip.block_m: duplicate axis"), std::string::npos) << e;
}

TEST(SweepLoader, DuplicateMappingKeyIsAnError) {
  const std::string e = error_of("device: teaching\naxes:\n  block_m: [64]\n  block_m: [32]\n");
  EXPECT_NE(e.find("s.yaml:4: axes.block_m: duplicate axis"), std::string::npos) << e;
}

TEST(SweepLoader, UnknownAxisKeyIsAnError) {
  EXPECT_NE(error_of("device: teaching\naxes:\n  blockm: [64]\n").find("s.yaml:3: axes.blockm: unknown axis"),
            std::string::npos);
}

TEST(SweepLoader, RangeIncludesStop) {
  const SweepSpec s = SweepLoader::load_text("device: teaching\naxes:\n  block_m: {start: 64, stop: 256, step: 64}\n", "s");
  EXPECT_EQ(ints(s.groups[0].axes[0]), (std::vector<std::int64_t>{64, 128, 192, 256}));
}

TEST(SweepLoader, Pow2ListsPowersBetweenBounds) {
  const SweepSpec s = SweepLoader::load_text("device: teaching\naxes:\n  seq: {pow2: [512, 4096]}\n", "s");
  EXPECT_EQ(ints(s.groups[0].axes[0]), (std::vector<std::int64_t>{512, 1024, 2048, 4096}));
}

TEST(SweepLoader, Pow2BoundThatIsNotAPowerIsAnError) {
  EXPECT_NE(error_of("device: teaching\naxes:\n  seq: {pow2: [500, 4096]}\n").find("axes.seq.pow2: lo and hi must be powers of two"),
            std::string::npos);
}

TEST(SweepLoader, ZippedAxesOfDifferentLengthsAreAnError) {
  EXPECT_NE(error_of("device: teaching\naxes:\n  zip:\n    seq_q: [1, 2]\n    seq_kv: [1]\n").find("s.yaml:5: axes.zip.seq_kv: zipped axes need equal lengths"),
            std::string::npos);
}

TEST(SweepLoader, ConstraintWithUnknownNameIsAnError) {
  const std::string e = error_of("device: teaching\naxes:\n  block_m: [64]\nconstraints:\n  - block_x <= block_m\n");
  EXPECT_NE(e.find("s.yaml:5: constraints[0]: unknown name 'block_x'"), std::string::npos) << e;
}

TEST(SweepLoader, DerivedValueMustBeBraced) {
  EXPECT_NE(error_of("device: teaching\naxes:\n  seq_q: [64]\nderived:\n  seq_kv: seq_q\n").find("s.yaml:5: derived.seq_kv"),
            std::string::npos);
}

TEST(SweepLoader, EveryProblemIsReportedAtOnce) {
  const std::string e = error_of("device: teaching\nfoo: 1\naxes:\n  block_m: []\n");
  EXPECT_NE(e.find("foo"), std::string::npos);
  EXPECT_NE(e.find("empty axis"), std::string::npos);
}

TEST(SweepLoader, PointCountIsProductOfGroups) {
  const SweepSpec s = SweepLoader::load_text(
      "device: teaching\naxes:\n  block_m: [64, 128]\n  zip:\n    seq_q: [1, 2, 3]\n    seq_kv: [4, 5, 6]\n", "s");
  EXPECT_EQ(s.point_count(), 6u);
}

}  // namespace
}  // namespace attnsim::config
