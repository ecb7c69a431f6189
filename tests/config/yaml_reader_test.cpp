// Typed scalar parsing and problem locations of the strict YAML reader.
#include "sim/config/yaml_reader.h"

#include <gtest/gtest.h>

#include "sim/config/map_reader.h"

namespace attnsim::config {
namespace {

TEST(YamlReader, BytesAcceptBinaryAndDecimalUnits) {
  YamlReader r("f.yaml");
  EXPECT_EQ(r.as_bytes(YAML::Load("60 MiB"), "k"), std::optional<std::uint64_t>(62914560));
  EXPECT_EQ(r.as_bytes(YAML::Load("1.5 KiB"), "k"), std::optional<std::uint64_t>(1536));
  EXPECT_EQ(r.as_bytes(YAML::Load("2 GB"), "k"), std::optional<std::uint64_t>(2000000000));
  EXPECT_EQ(r.as_bytes(YAML::Load("4096"), "k"), std::optional<std::uint64_t>(4096));
  EXPECT_FALSE(r.has_problems());
}

TEST(YamlReader, FractionalByteCountIsAProblem) {
  YamlReader r("f.yaml");
  EXPECT_FALSE(r.as_bytes(YAML::Load("1.3 B"), "k"));
  ASSERT_TRUE(r.has_problems());
  EXPECT_NE(r.problems()[0].message.find("whole number"), std::string::npos);
}

TEST(YamlReader, IntegerBeyond64BitsIsAProblem) {
  YamlReader r("f.yaml");
  EXPECT_FALSE(r.as_u64(YAML::Load("18446744073709551616"), "k"));
  EXPECT_NE(r.problems().at(0).message.find("64 bits"), std::string::npos);
}

TEST(YamlReader, LargestU64Parses) {
  YamlReader r("f.yaml");
  EXPECT_EQ(r.as_u64(YAML::Load("18446744073709551615"), "k"), std::optional<std::uint64_t>(18446744073709551615ull));
}

TEST(YamlReader, FloatIsNotAnInteger) {
  YamlReader r("f.yaml");
  EXPECT_FALSE(r.as_u64(YAML::Load("1.5"), "k"));
  EXPECT_TRUE(r.has_problems());
}

TEST(YamlReader, ProblemCarriesOneBasedLine) {
  const YAML::Node n = YAML::Load("a: 1\nb: oops\n");
  YamlReader r("f.yaml");
  r.as_u64(n["b"], "b");
  ASSERT_EQ(r.problems().size(), 1u);
  EXPECT_EQ(r.problems()[0].format(), "f.yaml:2: b: expected a non-negative integer, got 'oops'");
}

TEST(YamlReader, ThrowsAllProblemsTogether) {
  YamlReader r("f.yaml");
  r.problem_at_line(1, "a", "x");
  r.problem_at_line(2, "b", "y");
  try {
    r.throw_if_problems();
    FAIL();
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(e.problems().size(), 2u);
  }
}

TEST(MapReader, DuplicateKeyIsAProblem) {
  YamlReader r("f.yaml");
  const YAML::Node n = YAML::Load("a: 1\na: 2\n");
  MapReader m(r, n, "");
  std::uint64_t a = 0;
  m.u64("a", a);
  m.finish();
  ASSERT_EQ(r.problems().size(), 1u);
  EXPECT_EQ(r.problems()[0].format(), "f.yaml:2: a: key given twice");
}

TEST(MapReader, NestedPathsAreDotted) {
  YamlReader r("f.yaml");
  const YAML::Node n = YAML::Load("l2:\n  capacity: 1\n");
  MapReader top(r, n, "");
  MapReader l2(r, top.get("l2"), "l2");
  std::uint64_t c = 0;
  l2.u64("capacity_bytes", c, Need::kRequired);
  l2.finish();
  top.finish();
  ASSERT_EQ(r.problems().size(), 2u);
  EXPECT_EQ(r.problems()[0].format(), "f.yaml:2: l2.capacity_bytes: missing required key");
  EXPECT_EQ(r.problems()[1].format(), "f.yaml:2: l2.capacity: unknown key (did you mean 'capacity_bytes'?)");
}

TEST(MapReader, FarFetchedKeyGetsNoSuggestion) {
  YamlReader r("f.yaml");
  MapReader m(r, YAML::Load("zzzzzz: 1\n"), "");
  std::uint64_t v = 0;
  m.u64("batch", v);
  m.finish();
  ASSERT_EQ(r.problems().size(), 1u);
  EXPECT_EQ(r.problems()[0].message, "unknown key");
}

}  // namespace
}  // namespace attnsim::config
