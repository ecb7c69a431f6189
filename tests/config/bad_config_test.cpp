// Every bad-input fixture in tests/data/bad/ must fail with a ConfigError (exit code 2) whose
// problems are exactly those listed in its .expected file, each as "file:line: key: message".
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"

namespace attnsim::config {
namespace {

namespace fs = std::filesystem;

const std::string kBadDir = std::string(ATTNSIM_TEST_DATA) + "/bad";

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kBadDir))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> expected_lines(const std::string& name) {
  std::ifstream in(kBadDir + "/" + name + ".expected");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) lines.push_back(line);
  return lines;
}

class BadConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(BadConfig, FailsWithExpectedProblems) {
  const std::string name = GetParam();
  const std::string path = kBadDir + "/" + name + ".yaml";
  const auto expected = expected_lines(name);
  ASSERT_FALSE(expected.empty()) << "missing or empty " << name << ".expected";
  try {
    if (name.rfind("device_", 0) == 0) {
      load_device(path);
    } else {
      load_workload_file(path);
    }
    FAIL() << name << " loaded without error";
  } catch (const core::ConfigError& e) {
    const std::string message = e.what();
    for (const auto& line : expected) EXPECT_NE(message.find(path + ":" + line), std::string::npos)
        << "expected '" << path << ":" << line << "' in:\n" << message;
    EXPECT_EQ(e.problems().size(), expected.size()) << message;
    for (const auto& p : e.problems()) {
      EXPECT_EQ(p.file, path);
      EXPECT_GT(p.line, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BadConfig, ::testing::ValuesIn(fixture_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(BadConfigFixtures, CoverTheRequiredKindsOfMistake) {
  const auto names = fixture_names();
  for (const char* required : {"device_unknown_key", "device_wrong_type", "device_missing_key", "device_zero_size",
                               "device_negative_size", "device_non_pow2_line", "device_smem_block_exceeds_sm",
                               "device_malformed", "device_many_problems"})
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
}

}  // namespace
}  // namespace attnsim::config
