// `attnsim check` through app::run_cli: built-in grid, a workload file, bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/app/commands.h"

namespace attnsim::app {
namespace {

TEST(CheckCli, BuiltInGridMatchesAndExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", "--device", "teaching"}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("34 of 34 workloads match"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("MISMATCH"), std::string::npos);
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
  const auto path = std::filesystem::temp_directory_path() / "attnsim_check_cli_bad.yaml";
  std::ofstream(path) << "kernel: flash2\nseq: 128\nhead_dim: 128\nblock_m: 1024\nblock_n: 1024\n";
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", path.string(), "--device", "h200"}, out, err), 2);
  EXPECT_NE(err.str().find("block_m"), std::string::npos) << err.str();
  std::filesystem::remove(path);
}

TEST(CheckCli, SweepFileChecksEveryPossiblePoint) {
  // 2 block_m x 2 block_n x 2 causal = 8 points, all satisfying block_n <= block_m.
  std::ostringstream out, err;
  const std::string sweep = std::string(ATTNSIM_TEST_DATA) + "/check/small_sweep.yaml";
  EXPECT_EQ(run_cli({"check", sweep}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("8 of 8 workloads match"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("64x32 causal"), std::string::npos) << out.str();
}

TEST(CheckCli, SweepFileCountsImpossiblePointsAsSkipped) {
  const auto path = std::filesystem::temp_directory_path() / "attnsim_check_cli_sweep.yaml";
  std::ofstream(path) << "device: teaching\nbase: {kernel: flash2, seq: 64, head_dim: 16}\n"
                         "axes:\n  block_m: [16, 32]\n  block_n: [16, 32]\nconstraints:\n  - block_n <= block_m\n";
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", path.string()}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("3 of 3 workloads match"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("1 sweep points skipped"), std::string::npos) << out.str();
  std::filesystem::remove(path);
}

TEST(CheckCli, HelpPrintsUsage) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"check", "--help"}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("usage: attnsim check"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace attnsim::app
