// A result point's config reruns the point: the YAML that `run --out` and `sweep` store with each
// point (docs/hdf5-schema.md) is a workload file naming its own device and device overrides, so
// `attnsim run --workload CONFIG` (no --device) gives the point's metrics again, and `check` and
// --device take it too. Bad device entries in a workload file are located at their lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/app/sweep_cli_helpers.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;
using sweep_test::CliResult;

CliResult cli(const std::vector<std::string>& argv) { return sweep_test::cli_result(argv); }
fs::path scratch(const std::string& name) { return sweep_test::scratch("rerun", name); }

std::string write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

// `"metrics": {...}` of a run --json object: the run's totals (the last object of its kind).
std::string totals(const std::string& json) {
  const auto at = json.rfind("\"metrics\"");
  return at == std::string::npos ? "" : json.substr(at, json.find('}', at) - at);
}

TEST(RerunPoint, RunOutConfigRerunsTheRunWithItsDeviceAndOverrides) {
  const fs::path dir = scratch("run");
  const std::vector<std::string> args = {"run",   "--device", "teaching", "--kernel", "flash2", "--set", "seq=256",
                                         "--set", "heads=2",  "--set",    "causal=true", "--set",
                                         "device.l2.capacity_bytes=64 KiB", "--set", "device.sm.count=3"};
  std::vector<std::string> with_out = args;
  with_out.insert(with_out.end(), {"--out", (dir / "r.h5").string(), "--json"});
  const CliResult first = cli(with_out);
  ASSERT_EQ(first.code, 0) << first.err;
  const std::string config = io::read_results_h5((dir / "r.h5").string()).points.at(0).config_yaml;
  EXPECT_NE(config.find("device: teaching\n"), std::string::npos) << config;
  EXPECT_NE(config.find("device_overrides:\n  l2.capacity_bytes: 64 KiB\n  sm.count: 3\n"), std::string::npos) << config;
  const CliResult again = cli({"run", "--workload", write(dir / "point.yaml", config), "--json"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(totals(again.out), totals(first.out));
  // The same without the overrides differs (the check can tell them apart).
  std::vector<std::string> plain(args.begin(), args.end() - 4);
  plain.push_back("--json");
  EXPECT_NE(totals(cli(plain).out), totals(first.out));
  // --device replaces the file's device and its overrides.
  const CliResult other = cli({"run", "--workload", (dir / "point.yaml").string(), "--device", "teaching", "--json"});
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_EQ(totals(other.out), totals(cli(plain).out));
  // check takes the file's device too (its L2 then off): the point's closed forms hold.
  const CliResult checked = cli({"check", (dir / "point.yaml").string(), "--no-functional"});
  EXPECT_EQ(checked.code, 0) << checked.out << checked.err;
}

TEST(RerunPoint, SweepPointConfigRerunsThePoint) {
  const fs::path dir = scratch("sweep");
  const std::string sweep = write(dir / "s.yaml",
                                  "name: s\n"
                                  "device: teaching\n"
                                  "base: {kernel: flash2, heads: 2, seq: 256, head_dim: 64}\n"
                                  "set: {device.l2.capacity_bytes: 0, sim.mode: sampled, sim.min_ops: 0}\n"
                                  "axes:\n  block_n: [32, 64]\n");
  const CliResult swept = cli({"sweep", sweep, "--out", (dir / "s.h5").string(), "-j", "1"});
  ASSERT_EQ(swept.code, 0) << swept.err;
  const io::ResultsFile f = io::read_results_h5((dir / "s.h5").string());
  ASSERT_EQ(f.points.size(), 2u);
  for (const auto& p : f.points) {
    ASSERT_TRUE(p.result.has_value());
    const std::string path = write(dir / ("p" + std::to_string(p.index) + ".yaml"), p.config_yaml);
    const fs::path out = dir / ("p" + std::to_string(p.index) + ".h5");
    const CliResult again = cli({"run", "--workload", path, "--out", out.string()});
    ASSERT_EQ(again.code, 0) << again.err;
    const io::ResultsFile r = io::read_results_h5(out.string());
    ASSERT_TRUE(r.points.at(0).result.has_value());
    const auto& a = p.result->kernels;
    const auto& b = r.points.at(0).result->kernels;
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      ASSERT_EQ(a[k].metrics.size(), b[k].metrics.size());
      for (std::size_t m = 0; m < a[k].metrics.size(); ++m)
        EXPECT_EQ(a[k].metrics[m].value, b[k].metrics[m].value) << "point " << p.index << " " << a[k].metrics[m].name;
    }
    // The sweep stored the point's keys as given (the kernel's defaults resolve again on the
    // rerun); the rerun stores them resolved, the device and its overrides the same.
    EXPECT_NE(r.points.at(0).config_yaml.find("device: teaching\ndevice_overrides:\n  l2.capacity_bytes: 0\n"),
              std::string::npos);
  }
}

TEST(RerunPoint, BadDeviceEntriesInAWorkloadFileAreLocated) {
  const fs::path dir = scratch("bad");
  const CliResult bad_key = cli({"run", "--workload",
                                 write(dir / "a.yaml", "kernel: flash2\nseq: 256\ndevice: teaching\ndevice_overrides:\n  l2.capacity_bytes: -3\n"),
                                 "--json"});
  EXPECT_EQ(bad_key.code, 2);
  EXPECT_NE(bad_key.err.find("a.yaml:5: device_overrides.l2.capacity_bytes"), std::string::npos) << bad_key.err;
  const CliResult not_map = cli({"run", "--workload", write(dir / "b.yaml", "kernel: flash2\ndevice: teaching\ndevice_overrides: 3\n")});
  EXPECT_EQ(not_map.code, 2);
  EXPECT_NE(not_map.err.find("b.yaml:3: device_overrides"), std::string::npos) << not_map.err;
  const CliResult no_device = cli({"run", "--workload", write(dir / "c.yaml", "kernel: flash2\nseq: 256\n")});
  EXPECT_EQ(no_device.code, 2);
  EXPECT_NE(no_device.err.find("--device"), std::string::npos) << no_device.err;
  EXPECT_NE(no_device.err.find("device:"), std::string::npos) << no_device.err;
  const CliResult no_device_kernel = cli({"run", "--kernel", "flash2"});
  EXPECT_EQ(no_device_kernel.code, 2);
  EXPECT_NE(no_device_kernel.err.find("--device"), std::string::npos) << no_device_kernel.err;
  // A sweep's base is no workload file: a device there is still an unknown key.
  const CliResult in_base = cli({"sweep", write(dir / "s.yaml", "name: s\ndevice: teaching\nbase: {kernel: flash2, device: h200}\naxes:\n  seq: [256]\n"),
                                 "--out", (dir / "s.h5").string()});
  EXPECT_EQ(in_base.code, 2);
  EXPECT_NE(in_base.err.find("base.device"), std::string::npos) << in_base.err;
}

}  // namespace
}  // namespace attnsim::app
