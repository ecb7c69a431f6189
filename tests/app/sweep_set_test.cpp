// `attnsim sweep --set KEY=VALUE`: command-line overrides apply to every point as the sweep
// file's `set:` would, after it, and the results' provenance names them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/io/h5_results_reader.h"
#include "tests/app/sweep_cli_helpers.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

const std::string kSweep =
    "device: teaching\nbase:\n  kernel: flash2\n  seq: 128\n  head_dim: 32\n"
    "axes:\n  block_m: [32, 64]\n";

using sweep_test::cli;
using sweep_test::records;
std::string scratch(const std::string& name) { return sweep_test::scratch("sweep_set", name); }

TEST(SweepSet, CommandLineSetGivesThePointsOfTheFilesSet) {
  const std::string d = scratch("same");
  std::ofstream(d + "/cli.yaml") << kSweep;
  std::ofstream(d + "/file.yaml") << kSweep << "set:\n  sim.mode: sampled\n  device.l2.capacity_bytes: 0\n";
  ASSERT_EQ(cli({"sweep", d + "/cli.yaml", "--out", d + "/cli.h5", "-j", "1", "--set", "sim.mode=sampled", "--set",
                 "device.l2.capacity_bytes=0"}),
            0);
  ASSERT_EQ(cli({"sweep", d + "/file.yaml", "--out", d + "/file.h5", "-j", "1"}), 0);
  ASSERT_EQ(cli({"sweep", d + "/cli.yaml", "--out", d + "/plain.h5", "-j", "1"}), 0);
  EXPECT_EQ(records(d + "/cli.h5"), records(d + "/file.h5"));
  EXPECT_NE(records(d + "/cli.h5"), records(d + "/plain.h5")) << "the overrides changed nothing: the case tests nothing";
  const io::ResultsFile f = io::read_results_h5(d + "/cli.h5");
  const std::string text = f.string_attrs.at("sweep_file_text");
  EXPECT_NE(text.find("# attnsim sweep --set sim.mode=sampled"), std::string::npos) << text;
  EXPECT_NE(text.find("# attnsim sweep --set device.l2.capacity_bytes=0"), std::string::npos) << text;
}

// Both sampled-mode keys (docs/sampling.md) are keys a sweep sets, in its file or on the command
// line: sim.min_ops: 0 samples the teaching preset's small launches (run in full by default).
TEST(SweepSet, SimMinOpsIsSetLikeSimMode) {
  const std::string d = scratch("min_ops");
  std::ofstream(d + "/file.yaml") << kSweep << "set:\n  sim.mode: sampled\n  sim.min_ops: 0\n";
  std::ofstream(d + "/cli.yaml") << kSweep;
  std::ofstream(d + "/default.yaml") << kSweep << "set:\n  sim.mode: sampled\n";
  std::string err;
  ASSERT_EQ(cli({"sweep", d + "/file.yaml", "--out", d + "/file.h5", "-j", "1"}, &err), 0) << err;
  ASSERT_EQ(cli({"sweep", d + "/cli.yaml", "--out", d + "/cli.h5", "-j", "1", "--set", "sim.mode=sampled", "--set",
                 "sim.min_ops=0"}, &err),
            0)
      << err;
  ASSERT_EQ(cli({"sweep", d + "/default.yaml", "--out", d + "/default.h5", "-j", "1"}), 0);
  EXPECT_EQ(records(d + "/cli.h5"), records(d + "/file.h5"));
  EXPECT_NE(records(d + "/file.h5"), records(d + "/default.h5")) << "sim.min_ops: 0 changed nothing";
}

TEST(SweepSet, CommandLineSetReplacesTheFilesEntry) {
  const std::string d = scratch("replace");
  std::ofstream(d + "/s.yaml") << kSweep << "set:\n  seq: 256\n";
  std::ofstream(d + "/plain.yaml") << kSweep;
  ASSERT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/s.h5", "-j", "1", "--set", "seq=128"}), 0);
  ASSERT_EQ(cli({"sweep", d + "/plain.yaml", "--out", d + "/plain.h5", "-j", "1"}), 0);
  EXPECT_EQ(records(d + "/s.h5"), records(d + "/plain.h5"));
}

TEST(SweepSet, AKeyTheSweepVariesIsBadInput) {
  const std::string d = scratch("axis");
  std::ofstream(d + "/s.yaml") << kSweep;
  std::string err;
  EXPECT_EQ(cli({"sweep", d + "/s.yaml", "--out", d + "/s.h5", "--set", "block_m=64"}, &err), 2);
  EXPECT_NE(err.find("--set block_m: the sweep varies this key"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(d + "/s.h5"));
}

}  // namespace
}  // namespace attnsim::app
