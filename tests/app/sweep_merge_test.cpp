// attnsim merge: shard files of one sweep join into the unsharded result; files of other sweeps, missing or duplicate points are refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/io/h5_results_reader.h"
#include "tests/app/sweep_cli_helpers.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

const std::string kSweep =
    "device: teaching\nbase:\n  kernel: flash2\n  seq: 128\n  head_dim: 32\n"
    "axes:\n  block_m: [32, 64]\n  block_n: [16, 32]\n";

using sweep_test::cli;
using sweep_test::records;
std::string scratch(const std::string& name) { return sweep_test::scratch("merge", name); }

TEST(SweepMerge, ShardsMergeToTheUnshardedResult) {
  const std::string d = scratch("shards");
  std::ofstream(d + "/s.yaml") << kSweep;
  ASSERT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/all.h5", "-j", "1"}), 0);
  ASSERT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/s0.h5", "--shard", "0/2", "-j", "1"}), 0);
  ASSERT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/s1.h5", "--shard", "1/2", "-j", "1"}), 0);
  ASSERT_EQ(cli({"merge", "--out", d + "/m.h5", d + "/s1.h5", d + "/s0.h5"}), 0);
  EXPECT_EQ(records(d + "/m.h5"), records(d + "/all.h5"));
  EXPECT_TRUE(io::read_results_h5(d + "/m.h5").complete);
}

TEST(SweepMerge, FilesOfDifferentSweepsAreRefused) {
  const std::string d = scratch("different");
  std::ofstream(d + "/a.yaml") << kSweep;
  std::ofstream(d + "/b.yaml") << kSweep << "name: b\n";
  ASSERT_EQ(cli({"sweep", d + "/a.yaml", "--out", d + "/a.h5", "-j", "1"}), 0);
  ASSERT_EQ(cli({"sweep", d + "/b.yaml", "--out", d + "/b.h5", "-j", "1"}), 0);
  EXPECT_EQ(cli({"merge", "--out", d + "/m.h5", d + "/a.h5", d + "/b.h5"}), 2);
  EXPECT_FALSE(fs::exists(d + "/m.h5"));
}

TEST(SweepMerge, MissingShardIsRefused) {
  const std::string d = scratch("missing");
  std::ofstream(d + "/s.yaml") << kSweep;
  ASSERT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/s0.h5", "--shard", "0/2", "-j", "1"}), 0);
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"merge", "--out", d + "/m.h5", d + "/s0.h5"}, out, err), 2);
  EXPECT_NE(err.str().find("2 of 4 points are missing (first: 1, 3)"), std::string::npos) << err.str();
  EXPECT_FALSE(fs::exists(d + "/m.h5"));
}

TEST(SweepMerge, AllowMissingWritesAnIncompleteFile) {
  const std::string d = scratch("allow");
  std::ofstream(d + "/s.yaml") << kSweep;
  ASSERT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/s0.h5", "--shard", "0/2", "-j", "1"}), 0);
  ASSERT_EQ(cli({"merge", "--allow-missing", "--out", d + "/m.h5", d + "/s0.h5"}), 0);
  EXPECT_FALSE(io::read_results_h5(d + "/m.h5").complete);
}

TEST(SweepMerge, DuplicatePointsAreRefused) {
  const std::string d = scratch("duplicate");
  std::ofstream(d + "/s.yaml") << kSweep;
  ASSERT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/s0.h5", "--shard", "0/2", "-j", "1"}), 0);
  ASSERT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/s1.h5", "--shard", "1/2", "-j", "1"}), 0);
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"merge", "--out", d + "/m.h5", d + "/s0.h5", d + "/s1.h5", d + "/s0.h5"}, out, err), 2);
  EXPECT_NE(err.str().find("point 0 appears more than once"), std::string::npos) << err.str();
  EXPECT_FALSE(fs::exists(d + "/m.h5"));
}

}  // namespace
}  // namespace attnsim::app
