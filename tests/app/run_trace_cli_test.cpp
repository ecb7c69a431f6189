// `attnsim run --trace FILE --trace-ctas LIST`: a tab-separated timeline or a Chrome trace
// (.json) of the chosen CTAs' ops, the CTA list's syntax, and bad input (exit 2, no file).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/commands.h"
#include "sim/app/run_trace.h"
#include "sim/core/errors.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

int cli(std::vector<std::string> argv, std::string* err = nullptr, std::string* out_text = nullptr) {
  std::ostringstream out, e;
  const int code = run_cli(argv, out, e);
  if (err) *err = e.str();
  if (out_text) *out_text = out.str();
  return code;
}

std::vector<std::string> run_args(const std::string& trace, const std::string& ctas) {
  std::vector<std::string> a = {"run", "--device", "teaching", "--kernel", "flash2", "--set", "seq=256",
                                "--set", "head_dim=64", "--set", "heads=2", "--trace", trace};
  if (!ctas.empty()) a.insert(a.end(), {"--trace-ctas", ctas});
  return a;
}

std::vector<std::vector<std::string>> read_tsv(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cells.push_back(c);
    if (!line.empty() && line.back() == '\t') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

fs::path temp(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("attnsim_trace_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(RunTrace, TsvHasOneRowPerOpOfTheChosenCtas) {
  const fs::path p = temp("t.tsv");
  std::string err;
  ASSERT_EQ(cli(run_args(p.string(), "1,3"), &err), 0) << err;
  const auto rows = read_tsv(p);
  ASSERT_GT(rows.size(), 10u);
  const std::vector<std::string> header = {"launch", "kernel", "cta", "sm", "group", "step", "op", "kind", "tensor",
                                           "detail", "bytes", "start_cycles", "end_cycles", "ready_cycles",
                                           "start_us", "end_us"};
  EXPECT_EQ(rows[0], header);
  std::set<std::string> ctas, kinds;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), header.size()) << "row " << i;
    ctas.insert(rows[i][2]);
    kinds.insert(rows[i][7]);
    EXPECT_LE(std::stod(rows[i][11]), std::stod(rows[i][12])) << "row " << i;
    if (rows[i][7] == "load") {
      EXPECT_FALSE(rows[i][8].empty()) << "a load names its tensor";
    }
  }
  EXPECT_EQ(ctas, (std::set<std::string>{"1", "3"}));
  for (const char* k : {"load", "mma", "exp", "store"}) EXPECT_TRUE(kinds.count(k)) << k;
  fs::remove_all(p.parent_path());
}

TEST(RunTrace, ReportSaysWhereEachCtasTimeWent) {
  const fs::path p = temp("s.tsv");
  std::string err, out;
  ASSERT_EQ(cli(run_args(p.string(), "0,2"), &err, &out), 0) << err;
  EXPECT_NE(out.find("where the traced CTAs' time went:\n"), std::string::npos) << out;
  for (const char* cta : {"CTA 0: ", "CTA 2: "}) {
    const std::size_t at = out.find(std::string("flash2_fwd ") + cta);
    ASSERT_NE(at, std::string::npos) << out;
    const std::string line = out.substr(at, out.find('\n', at) - at);
    // "...: 12,345 cycles, global loads/stores 40.1 %, MMA 30.0 %, ...": the shares add up to 100 %.
    double sum = 0;
    std::size_t pos = line.find(" cycles");
    ASSERT_NE(pos, std::string::npos) << line;
    for (std::size_t pct; (pct = line.find(" %", pos)) != std::string::npos; pos = pct + 2) {
      const std::size_t space = line.rfind(' ', pct - 1);
      sum += std::stod(line.substr(space + 1, pct - space - 1));
    }
    EXPECT_NEAR(sum, 100.0, 0.5) << line;
    EXPECT_NE(line.find("MMA "), std::string::npos) << line;
  }
  fs::remove_all(p.parent_path());
}

TEST(RunTrace, JsonIsAChromeTraceOfTheSameOps) {
  const fs::path tsv = temp("t.tsv"), json = temp("t.json");
  ASSERT_EQ(cli(run_args(tsv.string(), "0")), 0);
  ASSERT_EQ(cli(run_args(json.string(), "0")), 0);
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::size_t complete = 0, names = 0;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "X") {
      ++complete;
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
      EXPECT_EQ(e.at("pid"), 0);
    } else if (e.at("ph") == "M") {
      ++names;
    }
  }
  EXPECT_EQ(complete + 1, read_tsv(tsv).size());  // the TSV's rows less its header
  EXPECT_EQ(names, 2u);                            // the launch and CTA 0's one group
  EXPECT_EQ(j.at("otherData").at("device"), "teaching");
  fs::remove_all(tsv.parent_path());
}

TEST(RunTrace, BadInputExitsTwoAndWritesNothing) {
  const fs::path p = temp("bad.tsv");
  std::string err;
  EXPECT_EQ(cli(run_args(p.string(), "100000"), &err), 2);
  EXPECT_NE(err.find("--trace-ctas: CTA 100000 is in no launch"), std::string::npos) << err;
  EXPECT_EQ(cli(run_args(p.string(), "4-2"), &err), 2);
  EXPECT_NE(err.find("runs backwards"), std::string::npos) << err;
  EXPECT_EQ(cli({"run", "--device", "teaching", "--kernel", "flash2", "--trace-ctas", "0"}, &err), 2);
  EXPECT_NE(err.find("give --trace FILE too"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(p));
  fs::remove_all(p.parent_path());
}

TEST(RunTrace, CtaListSyntax) {
  EXPECT_EQ(parse_cta_list("0,5,100-103", "x"), (std::vector<std::uint64_t>{0, 5, 100, 101, 102, 103}));
  EXPECT_EQ(parse_cta_list("7,3,3", "x"), (std::vector<std::uint64_t>{3, 7}));
  for (const char* bad : {"", ",", "1,", "a", "1-", "-3", "2-1", "1.5", "0-2000"})
    EXPECT_THROW(parse_cta_list(bad, "x"), core::ConfigError) << bad;
}

}  // namespace
}  // namespace attnsim::app
