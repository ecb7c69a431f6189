// What `attnsim run` and `attnsim formulas` tell a person: the run report starts with a summary
// (time with its unit, TFLOP/s and DRAM GB/s with % of peak, the bound, occupancy and limiter),
// the derived metrics are in --json, and both commands state and use one flash2 block-size rule.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/block_sizes.h"
#include "sim/app/commands.h"

namespace attnsim::app {
namespace {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

CliResult cli(std::vector<std::string> argv) {
  std::ostringstream out, err;
  const int code = run_cli(argv, out, err);
  return {code, out.str(), err.str()};
}

const std::vector<std::string> kTeachingFlash2 = {"run", "--device", "teaching", "--kernel", "flash2",
                                                  "--set", "seq=256", "--set", "head_dim=64", "--set", "heads=2"};

// The value after `"key": ` (a number or a quoted string) in a JSON text, from `from`; "" when absent.
std::string json_value(const std::string& text, const std::string& key, std::size_t from = 0) {
  std::smatch m;
  const std::string tail = text.substr(from);
  if (!std::regex_search(tail, m, std::regex("\"" + std::regex_replace(key, std::regex("\\."), "\\.") +
                                             "\": (\"[^\"]*\"|[-0-9.e+]+)")))
    return "";
  return m[1].str();
}

TEST(RunReport, StartsWithTheHumanSummary) {
  const auto r = cli(kTeachingFlash2);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("summary (flash2 on teaching)\n", 0), 0u) << r.out;
  const std::size_t table = r.out.find("gpu__time_duration.sum");
  ASSERT_NE(table, std::string::npos);
  const std::string head = r.out.substr(0, table);
  EXPECT_TRUE(std::regex_search(head, std::regex("\ntime +[0-9.]+ (ns|\u00b5s|ms|s)\n"))) << head;
  EXPECT_TRUE(std::regex_search(head, std::regex("\ncompute +[0-9.]+ TFLOP/s = [0-9.]+ % of peak \\([0-9.]+ TFLOP/s\\)\n")))
      << head;
  EXPECT_TRUE(std::regex_search(head, std::regex("\nDRAM +[0-9.]+ GB/s = [0-9.]+ % of peak \\([0-9.]+ GB/s\\)\n")))
      << head;
  EXPECT_TRUE(std::regex_search(head, std::regex("\nbound by +(dram|l2|smem|tensor|issue|latency) \\(busy: dram [0-9]+ %")))
      << head;
  EXPECT_TRUE(std::regex_search(
      head, std::regex("\noccupancy +[0-9.]+ % achieved, [0-9.]+ % theoretical \\([0-9]+ CTAs? per SM\\), limited by "
                       "(registers|shared_mem|warps|blocks); [0-9.]+ waves, tail [0-9.]+ %\n")))
      << head;
  EXPECT_NE(head.find("B_r = block_m = 128, B_c = block_n = 128"), std::string::npos) << head;
  EXPECT_NE(head.find(kernels::block_size_rule("flash2")), std::string::npos) << head;
}

TEST(RunReport, MetricTableCarriesUnits) {
  const auto r = cli(kTeachingFlash2);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nmetric +unit +flash2_fwd +total\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\ngpu__time_duration\\.sum +ns +[0-9]"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\ndram__bytes_read\\.sum +B +[0-9]"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nattnsim__cycles +cycles +[0-9]"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nattnsim__tflops +TFLOP/s +[0-9]"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nattnsim__bound +(dram|l2|smem|tensor|issue|latency) +"))) << r.out;
}

TEST(RunReport, SummaryTimeIsTheTablesTimeInMicroseconds) {
  const auto r = cli(kTeachingFlash2);
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch t, ns;
  ASSERT_TRUE(std::regex_search(r.out, t, std::regex("\ntime +([0-9.]+) \u00b5s")));
  ASSERT_TRUE(std::regex_search(r.out, ns, std::regex("\ngpu__time_duration\\.sum +ns +[0-9.e+,]+ +([0-9.e+,]+)\n")));
  const double table_ns = std::stod(std::regex_replace(ns[1].str(), std::regex(","), ""));
  EXPECT_NEAR(std::stod(t[1].str()), table_ns / 1e3, table_ns / 1e3 * 0.01);
}

TEST(RunJson, CarriesTheDerivedMetricsPerLaunchAndInTotal) {
  auto args = kTeachingFlash2;
  args.push_back("--json");
  const auto r = cli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::size_t totals = r.out.rfind("\"metrics\": {");
  ASSERT_NE(totals, std::string::npos);
  for (const char* k : {"attnsim__tflops", "attnsim__pct_peak_flops", "attnsim__dram_gbps", "attnsim__pct_peak_dram",
                        "attnsim__dram_busy_pct", "attnsim__tensor_busy_pct"}) {
    EXPECT_NE(json_value(r.out, k), "") << k;          // the launch's
    EXPECT_NE(json_value(r.out, k, totals), "") << k;  // the run's
  }
  EXPECT_TRUE(std::regex_match(json_value(r.out, "attnsim__bound", totals),
                               std::regex("\"(dram|l2|smem|tensor|issue|latency)\"")));
  EXPECT_TRUE(std::regex_match(json_value(r.out, "attnsim__occupancy_limiter"),
                               std::regex("\"(registers|shared_mem|warps|blocks)\"")));
  // TFLOP/s = FLOP / time.
  const double flops = std::stod(json_value(r.out, "attnsim__flops", totals));
  const double ns = std::stod(json_value(r.out, "gpu__time_duration.sum", totals));
  EXPECT_NEAR(std::stod(json_value(r.out, "attnsim__tflops", totals)), flops / ns / 1e3, 1e-9 * flops / ns);
}

TEST(StreamRead, ManyCtasStreamingAreDramBound) {
  const auto r = cli({"run", "--device", "h200", "--kernel", "stream_read", "--set", "programs=1056", "--set",
                      "total_bytes=67108864", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::size_t totals = r.out.rfind("\"metrics\": {");
  EXPECT_EQ(json_value(r.out, "attnsim__bound", totals), "\"dram\"");
  EXPECT_GT(std::stod(json_value(r.out, "attnsim__pct_peak_dram", totals)), 60.0);
}

// `formulas` and `run` agree on flash2's blocks: formulas' closed form uses the blocks run resolves.
TEST(Flash2Definition, FormulasUsesTheBlocksRunUses) {
  for (const char* d : {"64", "128"}) {
    const auto f = cli({"formulas", "--seq", "1024", "--tile", "128", "--head-dim", d, "--json"});
    ASSERT_EQ(f.code, 0) << f.err;
    const auto r = cli({"run", "--device", "h200", "--kernel", "flash2", "--set", "seq=1024", "--set",
                        std::string("head_dim=") + d, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::size_t f2 = f.out.find("\"flash2\": {");
    ASSERT_NE(f2, std::string::npos);
    EXPECT_EQ(json_value(f.out, "block_m", f2), json_value(r.out, "block_m")) << "head_dim " << d;
    EXPECT_EQ(json_value(f.out, "block_n", f2), json_value(r.out, "block_n")) << "head_dim " << d;
  }
  const auto f = cli({"formulas", "--seq", "1024", "--tile", "128", "--head-dim", "128", "--json"});
  EXPECT_EQ(json_value(f.out, "block_n", f.out.find("\"flash2\": {")), "64");
}

TEST(Flash2Definition, FormulasStatesTheSameRuleAsRun) {
  const auto f = cli({"formulas", "--seq", "1024", "--tile", "128", "--head-dim", "64"});
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_NE(f.out.find(kernels::block_size_rule("flash2")), std::string::npos) << f.out;
  EXPECT_NE(f.out.find(kernels::block_size_rule("flash1")), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("flash2: B_r = 128, B_c = 128 (FlashAttention-2 defaults; M does not enter)"), std::string::npos)
      << f.out;
  const auto r = cli(kTeachingFlash2);
  EXPECT_NE(r.out.find(kernels::block_size_rule("flash2")), std::string::npos);
}

}  // namespace
}  // namespace attnsim::app
