// `attnsim check` through app::run_cli: built-in grid, a workload file, bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/app/commands.h"

namespace attnsim::app {
namespace {

TEST(CheckCli, BuiltInGridMatchesAndExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", "--device", "teaching"}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("49 of 49 workloads match"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("MISMATCH"), std::string::npos);
}

// Every row of the built-in grid reads differently: fp8 rows name their dtype, flash_decode rows
// their split count, Triton rows their impl, packed-qkv rows the key; a tile the kernel picks itself prints as "auto" (both: no tile), never "0".
TEST(CheckCli, BuiltInGridRowsAreDistinct) {
  std::ostringstream out, err;
  ASSERT_EQ(run_cli({"check", "--device", "h100-sxm", "--no-functional"}, out, err), 0) << err.str();
  std::istringstream lines(out.str());
  std::string line;
  std::set<std::string> names;
  int rows = 0;
  while (std::getline(lines, line)) {
    const auto end = line.find("  ");
    if (line.rfind("workload", 0) == 0 || end == std::string::npos) continue;
    ++rows;
    EXPECT_TRUE(names.insert(line.substr(0, end)).second) << "repeated row: " << line.substr(0, end);
    EXPECT_EQ(line.find(" 0x"), std::string::npos) << line;
  }
  EXPECT_GT(rows, 60);
  EXPECT_NE(out.str().find("d32 64x32 fp8"), std::string::npos);
  EXPECT_NE(out.str().find(" splits3 causal"), std::string::npos);
  EXPECT_NE(out.str().find(" qkv_packed causal fwdbwd"), std::string::npos);
  EXPECT_NE(out.str().find(" scale_kernel causal fwdbwd"), std::string::npos);
  EXPECT_NE(out.str().find(" triton causal fwdbwd"), std::string::npos);
  EXPECT_NE(out.str().find("flash3 B2 H4/4 N300x330 d128 fwdbwd "), std::string::npos) << "FA-3's own tiles";
  EXPECT_NE(out.str().find(" autox32"), std::string::npos) << "flash_decode's block_m is its own";
}

TEST(CheckCli, WorkloadFileIsCheckedOnH200) {
  const auto path = std::filesystem::temp_directory_path() / "attnsim_check_cli_test.yaml";
  std::ofstream(path) << "kernel: flash2\nbatch: 1\nheads: 4\nkv_heads: 2\nseq: 100\nhead_dim: 32\n"
                         "causal: true\npass: fwdbwd\nblock_m: 64\nblock_n: 32\n";
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", path.string(), "--device", "h200"}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("1 of 1 workloads match"), std::string::npos) << out.str();
  std::filesystem::remove(path);
}

TEST(CheckCli, ImpossibleTilesAreBadInput) {
  // One workload file the device cannot hold is bad input; the blame goes to the block whose tiles
  // take most of the space (K and V: 2 x 1024 rows against Q's 1024), at its line in the file.
  const auto path = std::filesystem::temp_directory_path() / "attnsim_check_cli_bad.yaml";
  std::ofstream(path) << "kernel: flash2\nseq: 128\nhead_dim: 128\nblock_m: 1024\nblock_n: 1024\n";
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", path.string(), "--device", "h200"}, out, err), 2);
  EXPECT_NE(err.str().find("error: " + path.string() + ":5: block_n: flash2 tiles 1024x1024"), std::string::npos)
      << err.str();
  std::filesystem::remove(path);
}

TEST(CheckCli, TileBlameFollowsTheLargerBlock) {
  std::ostringstream out, err;
  // 128x1024: the K/V tiles (2 x 1024 rows) do not fit, not Q's 128 rows.
  EXPECT_EQ(run_cli({"run", "--device", "h200", "--kernel", "flash2", "--set", "head_dim=64", "--set", "block_m=128",
                     "--set", "block_n=1024"},
                    out, err),
            2);
  EXPECT_NE(err.str().find("error: --set block_n: flash2 tiles 128x1024"), std::string::npos) << err.str();
  std::ostringstream out2, err2;
  // 1024x16: Q's 1024 rows take most of the space.
  EXPECT_EQ(run_cli({"run", "--device", "h200", "--kernel", "flash2", "--set", "head_dim=128", "--set",
                     "block_m=1024", "--set", "block_n=16"},
                    out2, err2),
            2);
  EXPECT_NE(err2.str().find("error: --set block_m: flash2 tiles 1024x16"), std::string::npos) << err2.str();
  // standard's GEMM tiles: the larger side, or smem_per_cta when it was given.
  std::ostringstream out3, err3, out4, err4;
  EXPECT_EQ(run_cli({"run", "--device", "h200", "--kernel", "standard", "--set", "block_m=64", "--set",
                     "block_n=4096"},
                    out3, err3),
            2);
  EXPECT_NE(err3.str().find("error: --set block_n: GEMM tiles 64x4096"), std::string::npos) << err3.str();
  EXPECT_EQ(run_cli({"run", "--device", "h200", "--kernel", "standard", "--set", "smem_per_cta=300000"}, out4, err4), 2);
  EXPECT_NE(err4.str().find("error: --set smem_per_cta: GEMM tiles"), std::string::npos) << err4.str();
}

TEST(CheckCli, SweepFileChecksEveryPossiblePoint) {
  // 2 block_m x 2 block_n x 2 causal = 8 points, all satisfying block_n <= block_m.
  std::ostringstream out, err;
  const std::string sweep = std::string(ATTNSIM_TEST_DATA) + "/check/small_sweep.yaml";
  EXPECT_EQ(run_cli({"check", sweep}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("8 of 8 workloads match"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("64x32 causal"), std::string::npos) << out.str();
}

TEST(CheckCli, SweepFileCountsImpossiblePoints) {
  const auto path = std::filesystem::temp_directory_path() / "attnsim_check_cli_sweep.yaml";
  std::ofstream(path) << "device: teaching\nbase: {kernel: flash2, seq: 64, head_dim: 16}\n"
                         "axes:\n  block_m: [16, 32]\n  block_n: [16, 32]\nconstraints:\n  - block_n <= block_m\n";
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", path.string()}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("3 of 3 workloads match"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("sweep: 4 points: 3 checked, 1 impossible, 0 skipped"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("impossible: constraint 'block_n <= block_m' is false"), std::string::npos) << out.str();
  std::filesystem::remove(path);
}

// A sweep file in the test's temporary directory.
std::string temp_sweep(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(::testing::TempDir()) / ("attnsim_check_cli_" + name + ".yaml");
  std::ofstream(path) << text;
  return path.string();
}

// 2 x 2 points on h200: block_n 1024 does not fit in shared memory with block_m 64 or 128.
const char* const kTileSweep =
    "device: h200\nbase: {kernel: flash2, batch: 1, heads: 2, seq: 256, head_dim: 64}\n"
    "axes:\n  block_m: [64, 128]\n  block_n: [64, 1024]\n";

TEST(CheckCli, TileThatDoesNotFitIsImpossibleAsInSweep) {
  const std::string path = temp_sweep("tiles", kTileSweep);
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", path, "-j", "2"}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("sweep: 4 points: 2 checked, 2 impossible, 0 skipped"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("impossible: block_n: flash2 tiles 128x1024"), std::string::npos) << out.str();
  // attnsim sweep counts the same points as impossible.
  const std::string h5 = (std::filesystem::path(::testing::TempDir()) / "attnsim_check_cli_tiles.h5").string();
  std::filesystem::remove(h5);
  std::ostringstream sout, serr;
  EXPECT_EQ(run_cli({"sweep", path, "--out", h5, "-j", "1"}, sout, serr), 0) << serr.str();
  EXPECT_NE(sout.str().find("4 points: 2 ok, 2 impossible, 0 error"), std::string::npos) << sout.str();
  std::filesystem::remove(h5);
  // --strict: impossible points fail the check.
  std::ostringstream out2, err2;
  EXPECT_EQ(run_cli({"check", path, "--strict", "--no-functional"}, out2, err2), 1) << out2.str() << err2.str();
  EXPECT_NE(out2.str().find("--strict: 2 impossible sweep points"), std::string::npos) << out2.str();
}

TEST(CheckCli, OutputIsTheSameForAnyJobCount) {
  const std::string path = temp_sweep("jobs", kTileSweep);
  std::string first_text, first_json;
  for (const char* jobs : {"1", "2", "3", "8"}) {
    std::ostringstream out, err, jout, jerr;
    EXPECT_EQ(run_cli({"check", path, "-j", jobs}, out, err), 0) << err.str();
    EXPECT_EQ(run_cli({"check", path, "-j", jobs, "--json"}, jout, jerr), 0) << jerr.str();
    if (first_text.empty()) {
      first_text = out.str();
      first_json = jout.str();
    }
    EXPECT_EQ(out.str(), first_text) << "-j " << jobs;
    EXPECT_EQ(jout.str(), first_json) << "-j " << jobs;
  }
}

TEST(CheckCli, JsonHasOneObjectPerPointAndASummary) {
  const std::string path = temp_sweep("json", kTileSweep);
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", path, "--json", "--no-functional"}, out, err), 0) << err.str();
  const std::string j = out.str();
  EXPECT_EQ(j.front(), '{');
  EXPECT_NE(j.find("\"input\": \"sweep\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"functional\": false"), std::string::npos) << j;
  EXPECT_NE(j.find("\"params\": {\n        \"block_m\": \"128\",\n        \"block_n\": \"1024\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"status\": \"impossible\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"functional_max_rel_error\": null"), std::string::npos) << j;
  EXPECT_NE(j.find("\"summary\": {\n    \"points\": 4,\n    \"checked\": 2,\n    \"match\": 2,\n    \"mismatch\": 0,\n"
                   "    \"impossible\": 2,\n    \"skipped\": 0\n  }"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"exit_code\": 0"), std::string::npos) << j;
  std::size_t labels = 0;
  for (auto p = j.find("\"label\""); p != std::string::npos; p = j.find("\"label\"", p + 1)) ++labels;
  EXPECT_EQ(labels, 4u);
}

TEST(CheckCli, RowsNameEverySweptKey) {
  // Points that differ only in stages or warps get different rows.
  const std::string path = temp_sweep(
      "stages", "device: teaching\nbase: {kernel: flash2, seq: 64, head_dim: 16, block_m: 16, block_n: 16}\n"
                "axes:\n  stages: [2, 3]\n  warps: [4, 8]\n");
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", path, "--no-functional"}, out, err), 0) << out.str() << err.str();
  std::set<std::string> rows;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);)
    if (line.find("  ok") != std::string::npos) rows.insert(line);
  EXPECT_EQ(rows.size(), 4u) << out.str();
  EXPECT_NE(out.str().find("stages=3 warps=8"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("functional not run"), std::string::npos) << out.str();
}

TEST(CheckCli, HelpPrintsUsage) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", "--help"}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("usage: attnsim check"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace attnsim::app
