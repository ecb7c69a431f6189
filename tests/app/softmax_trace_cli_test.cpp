#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/commands.h"

namespace attnsim::app {
namespace {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

CliResult run(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  const int code = run_cli(argv, out, err);
  return {code, out.str(), err.str()};
}

// All numbers that follow `"key": ` in a JSON text, in order (null entries skipped).
std::vector<double> json_numbers(const std::string& text, const std::string& key) {
  std::vector<double> values;
  const std::regex re("\"" + key + "\": (-?[0-9][0-9.eE+-]*)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    values.push_back(std::stod((*it)[1].str()));
  }
  return values;
}

const double kL1 = std::exp(-4.0) + std::exp(-2.0) + std::exp(-3.0) + 1.0;  // block 1: 1,3,2 vs max 5

TEST(SoftmaxTraceCli, TableShowsFirstBlockMaxAndSum) {
  const auto r = run({"softmax-trace", "--scores", "1,3,2,5,4,0,6,2", "--block", "4"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Row of block 1: its scores, m_old -inf, m = 5, no rescale, ℓ = 1.2034 (4 decimals).
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n\s*1\s+1 3 2 5\s+-inf\s+5\.0000\s+-\s+1\.2034\n)")))
      << r.out;
}

TEST(SoftmaxTraceCli, TableShowsRescaleWhenTheMaxGrows) {
  const auto r = run({"softmax-trace", "--scores", "1,3,2,5,4,0,6,2", "--block", "4"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Block 2: max 5 -> 6, rescale e^-1 = 0.3679, ℓ = 1.2034 e^-1 + e^-2 + e^-6 + 1 + e^-4 = 1.5988.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n\s*2\s+4 0 6 2\s+5\.0000\s+6\.0000\s+0\.3679\s+1\.5988\n)")))
      << r.out;
  EXPECT_NE(r.out.find("max |online - direct|"), std::string::npos);
}

TEST(SoftmaxTraceCli, JsonCarriesFullPrecisionPerBlock) {
  const auto r = run({"softmax-trace", "--scores", "1,3,2,5,4,0,6,2", "--block", "4", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto m = json_numbers(r.out, "m");
  const auto l = json_numbers(r.out, "l");
  const auto rescale = json_numbers(r.out, "rescale");  // block 1's is null
  ASSERT_EQ(m.size(), 2u);
  ASSERT_EQ(l.size(), 2u);
  ASSERT_EQ(rescale.size(), 1u);
  EXPECT_EQ(m[0], 5.0);
  EXPECT_NEAR(l[0], kL1, 1e-15);
  EXPECT_EQ(m[1], 6.0);
  EXPECT_NEAR(rescale[0], std::exp(-1.0), 1e-16);
  EXPECT_NEAR(l[1], kL1 * std::exp(-1.0) + std::exp(-2.0) + std::exp(-6.0) + 1.0 + std::exp(-4.0), 1e-15);
  EXPECT_EQ(json_numbers(r.out, "block"), std::vector<double>{4.0});
}

TEST(SoftmaxTraceCli, JsonSoftmaxEqualsDirectSoftmax) {
  const auto r = run({"softmax-trace", "--scores", "1,3,2,5,4,0,6,2", "--block", "3", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(r.out, match, std::regex(R"("direct_softmax": \[([^\]]*)\])")));
  std::vector<double> direct;
  std::stringstream list(match[1].str());
  for (std::string item; std::getline(list, item, ',');) direct.push_back(std::stod(item));
  const std::vector<double> s{1, 3, 2, 5, 4, 0, 6, 2};
  double total = 0.0;
  for (double e : s) total += std::exp(e);
  ASSERT_EQ(direct.size(), s.size());
  for (std::size_t j = 0; j < s.size(); ++j) EXPECT_NEAR(direct[j], std::exp(s[j]) / total, 1e-15);
  const auto diff = json_numbers(r.out, "max_abs_difference");
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_LE(diff[0], 1e-15);
  EXPECT_EQ(json_numbers(r.out, "index").size(), 3u);  // 3 + 3 + 2: ragged last block
}

TEST(SoftmaxTraceCli, BlockBelowOneIsBadInputNamingTheFlag) {
  for (const char* block : {"0", "-2"}) {
    const auto r = run({"softmax-trace", "--scores", "1,2,3", std::string("--block=") + block});
    EXPECT_EQ(r.code, 2) << block;
    EXPECT_NE(r.err.find("--block: must be >= 1"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(SoftmaxTraceCli, MalformedScoresAreBadInputNamingTheFlag) {
  for (const char* scores : {"1,,2", "1,x,2", "1,2,", "nan", " "}) {
    const auto r = run({"softmax-trace", std::string("--scores=") + scores, "--block", "2"});
    EXPECT_EQ(r.code, 2) << "'" << scores << "'";
    EXPECT_NE(r.err.find("--scores: "), std::string::npos) << r.err;
  }
}

TEST(SoftmaxTraceCli, EmptyScoresIsBadInputNamingTheFlag) {
  const auto r = run({"softmax-trace", "--scores=", "--block", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--scores"), std::string::npos) << r.err;
}

TEST(SoftmaxTraceCli, MissingScoresIsBadInput) {
  const auto r = run({"softmax-trace", "--block", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("scores"), std::string::npos) << r.err;
}

TEST(SoftmaxTraceCli, HelpListsTheOptions) {
  const auto r = run({"softmax-trace", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--scores"), std::string::npos);
  EXPECT_NE(r.out.find("--block"), std::string::npos);
}

}  // namespace
}  // namespace attnsim::app
