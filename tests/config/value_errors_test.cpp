// A value wrong in itself is bad input wherever it appears (sweep base, set, axes; workload and
// device files; --set), reported at file:line: key.path; only valid combinations become
// impossible sweep points. Ends with a fuzz-style check that every reported line holds its key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/device_loader.h"
#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"
#include "sweep_errors.h"

namespace attnsim::config {
namespace {

namespace fs = std::filesystem;

using testing::error_of;

const std::string kHead = "device: teaching\nbase:\n  kernel: flash2\n  seq: 64\n  head_dim: 16\n";

TEST(ValueErrors, AxisValuesWrongInThemselvesAreBadInput) {
  const std::string e = error_of(kHead + "axes:\n  block_n: [32, 12.5]\n  seq: [-512]\n  cta_order: [column-major]\n");
  EXPECT_NE(e.find("s.yaml:7: axes.block_n[1]: expected a positive integer, got '12.5'"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:8: axes.seq[0]: expected a positive integer, got -512"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:9: axes.cta_order[0]: unknown value 'column-major' (known: row-major, head-major)"),
            std::string::npos)
      << e;
}

TEST(ValueErrors, BlockListElementsAreLocatedAtTheirOwnLines) {
  const std::string e = error_of(kHead + "axes:\n  zip:\n    block_m:\n      - 16\n      - 0\n    warps: [4, x]\n");
  EXPECT_NE(e.find("s.yaml:10: axes.zip.block_m[1]: expected a positive integer, got 0"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:11: axes.zip.warps[1]: expected a positive integer, got 'x'"), std::string::npos) << e;
}

TEST(ValueErrors, RangeValuesAreCheckedToo) {
  const std::string e = error_of(kHead + "axes:\n  block_m: {start: -16, stop: 16, step: 16}\n");
  EXPECT_NE(e.find("s.yaml:7: axes.block_m: expected a positive integer, got -16"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:7: axes.block_m: expected a positive integer, got 0"), std::string::npos) << e;
}

TEST(ValueErrors, KernelAndBooleanAxesUseTheirKeysChecks) {
  const std::string e = error_of(kHead + "axes:\n  kernel: [flash2, flash5]\n  causal: [true, maybe]\n");
  EXPECT_NE(e.find("s.yaml:7: axes.kernel[1]: unknown kernel 'flash5'"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:8: axes.causal[1]: expected true or false, got 'maybe'"), std::string::npos) << e;
}

TEST(ValueErrors, BaseAndSetKeysHaveTheirLinesAndFullPaths) {
  const std::string e =
      error_of("name: x\ndevice: teaching\nset:\n  warps: -1\n  device.l2.capacity_bytes: lots\n"
               "  device.l2.asociativity: 4\nbase:\n  kernel: flash2\n  blockm: 64\n  dtype: fp7\naxes:\n  seq: [64]\n");
  EXPECT_NE(e.find("s.yaml:4: set.warps: expected a positive integer, got -1"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:5: set.device.l2.capacity_bytes: expected a byte count"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:6: set.device.l2.asociativity: unknown key (did you mean 'associativity'?)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:9: base.blockm: unknown key (did you mean 'block_m'?)"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:10: base.dtype: unknown value 'fp7'"), std::string::npos) << e;
}

TEST(ValueErrors, DeviceAxisValuesAreCheckedByTheDeviceLoader) {
  const std::string e = error_of(kHead + "axes:\n  device.l2.associativity: [16, 3, 256]\n");
  EXPECT_NE(e.find("s.yaml:7: axes.device.l2.associativity[1]: must be a power of two, got 3"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:7: axes.device.l2.associativity[2]: must be at most 128, got 256"), std::string::npos) << e;
}

TEST(ValueErrors, UnknownDevicePresetIsLocatedAtItsLine) {
  const SweepSpec spec = SweepLoader::load_text("name: x\n# the preset\ndevice: h9000\naxes:\n  seq: [64]\n", "s.yaml");
  try {
    SweepExpander{spec};
    FAIL() << "expected a ConfigError";
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.yaml:3: device: unknown device preset 'h9000'", 0), 0u) << e.what();
  }
}

TEST(ValueErrors, ValidCombinationsStayImpossiblePoints) {
  // heads % kv_heads, a cache size that is not a whole number of sets, a failed constraint: each
  // value is valid alone, so the points are kept as impossible with their reason.
  const SweepSpec spec = SweepLoader::load_text(
      "device: teaching\nbase: {kernel: flash2, seq: 64, head_dim: 16, heads: 4}\n"
      "axes:\n  kv_heads: [2, 3]\n  device.l2.capacity_bytes: [65536, 1000]\n",
      "s.yaml");
  const SweepExpander x(spec);
  ASSERT_EQ(x.size(), 4u);
  EXPECT_TRUE(x.point(0).possible) << x.point(0).reason;
  EXPECT_FALSE(x.point(1).possible);
  EXPECT_NE(x.point(1).reason.find("capacity_bytes"), std::string::npos) << x.point(1).reason;
  EXPECT_FALSE(x.point(2).possible);
  EXPECT_EQ(x.point(2).reason, "kv_heads: heads (4) must be a multiple of kv_heads (3)");
  EXPECT_EQ(x.point(1).reason.rfind("device.l2.capacity_bytes: must be a multiple", 0), 0u) << x.point(1).reason;
}

TEST(ValueErrors, CommandLineOverridesStillSayDashDashSet) {
  try {
    workload_for_kernel("flash2", parse_overrides({"block_n=12.5"}));
    FAIL() << "expected a ConfigError";
  } catch (const core::ConfigError& e) {
    EXPECT_STREQ(e.what(), "--set block_n: expected a positive integer, got '12.5'");
  }
  try {
    load_device("teaching", {{"l.capacity_bytes", "1"}});
    FAIL() << "expected a ConfigError";
  } catch (const core::ConfigError& e) {
    EXPECT_STREQ(e.what(), "--set device.l.capacity_bytes: unknown key (did you mean 'l2'?)");
  }
  try {
    workload_for_kernel("flash9");
    FAIL() << "expected a ConfigError";
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--kernel: unknown kernel 'flash9'", 0), 0u) << e.what();
  }
}

// ---- Fuzz-style: corrupt one key or value of a valid file at a random position, load it, and
// check that every "file:line: path" in the message points at a line holding the path's last
// key (or, for a list element, the corrupted value).

struct Line {
  int indent;
  std::string key;    // "" for a list element
  std::string value;  // "" for a mapping opener
};

// The files the loaders read: a sweep, a workload, a device (teaching preset, as written).
const char* const kSweep =
    "name: fuzz\n"
    "device: teaching\n"
    "set:\n"
    "  functional: false\n"
    "  device.l2.capacity_bytes: 65536\n"
    "base:\n"
    "  kernel: flash2\n"
    "  batch: 1\n"
    "  heads: 4\n"
    "  kv_heads: 2\n"
    "  head_dim: 16\n"
    "  dtype: fp16\n"
    "  cta_order: row-major\n"
    "axes:\n"
    "  seq: [64, 128]\n"
    "  block_m:\n"
    "    - 16\n"
    "    - 32\n"
    "  zip:\n"
    "    block_n: [16, 32]\n"
    "    warps: [4, 4]\n"
    "  device.l2.associativity: [4, 8]\n";

const char* const kWorkload =
    "kernel: flash2\n"
    "batch: 1\n"
    "heads: 4\n"
    "kv_heads: 2\n"
    "seq_q: 64\n"
    "seq_kv: 64\n"
    "head_dim: 16\n"
    "dtype: fp16\n"
    "causal: true\n"
    "pass: fwd\n"
    "block_m: 16\n"
    "block_n: 16\n"
    "warps: 4\n"
    "stages: 2\n"
    "cta_order: head-major\n";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Corruptions of a value (wrong type, out of range, unknown choice) and of a key (a typo).
const std::vector<std::string> kBadValues = {"-7", "12.5", "sideways", "[1, 2]", "0"};

// Replaces, on a random line holding `key: value` (or `- value`), the key by a typo or the value
// by a bad one. Returns the corrupted text; `what` says what was corrupted.
std::string corrupt(const std::string& text, std::mt19937& rng, std::string& what) {
  std::vector<std::string> lines = split_lines(text);
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto first = lines[i].find_first_not_of(' ');
    if (first == std::string::npos || lines[i][first] == '#') continue;  // blank or a comment
    if (lines[i].find(": ") != std::string::npos || lines[i].compare(first, 2, "- ") == 0) candidates.push_back(i);
  }
  const std::size_t i = candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng)];
  std::string& l = lines[i];
  if (const auto comment = l.find(" #"); comment != std::string::npos) l.erase(comment);  // "key: v  # source"
  const auto colon = l.find(": ");
  const auto indent = l.find_first_not_of(' ');
  const bool element = l.compare(indent, 2, "- ") == 0;
  if (!element && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
    // Key typo: drop one character of the key (a key that cannot be another known one).
    const std::string key = l.substr(indent, colon - indent);
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, key.size() - 1)(rng);
    l = l.substr(0, indent) + key.substr(0, at) + key.substr(at + 1) + "x" + l.substr(colon);
    what = "key on line " + std::to_string(i + 1);
  } else {
    const std::string bad = kBadValues[std::uniform_int_distribution<std::size_t>(0, kBadValues.size() - 1)(rng)];
    if (element) {
      l = l.substr(0, indent) + "- " + bad;
    } else if (l.find('[', colon) != std::string::npos) {
      // A flow list: replace its last element.
      const auto close = l.rfind(']');
      const auto comma = l.rfind(',', close);
      l = l.substr(0, comma + 2) + (bad == "[1, 2]" ? "nine" : bad) + "]";
    } else {
      l = l.substr(0, colon + 2) + bad;
    }
    what = "value on line " + std::to_string(i + 1);
  }
  std::string out;
  for (const auto& x : lines) out += x + "\n";
  return out;
}

// Every located problem in `message` about `file`: its line must hold the last key of its path
// (for "a.b[2]": "b", or a list element's own line).
void expect_lines_hold_keys(const std::string& message, const std::string& file, const std::string& text,
                            const std::string& context) {
  const std::vector<std::string> lines = split_lines(text);
  std::istringstream in(message);
  int located = 0;
  for (std::string m; std::getline(in, m);) {
    if (m.rfind(file + ":", 0) != 0) continue;
    static const std::regex re(R"(^[^:]*:(\d+): ([A-Za-z0-9_.\[\]]+): )");
    std::smatch match;
    const std::string rest = m;
    if (!std::regex_search(rest, match, re)) continue;  // a whole-file problem
    if (m.find(": missing") != std::string::npos) continue;  // an absent key: located at its mapping
    const int line = std::stoi(match[1]);
    std::string path = match[2];
    const bool element = !path.empty() && path.back() == ']';
    if (element) path = path.substr(0, path.rfind('['));
    const std::string last = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
    ASSERT_GE(line, 1) << m << "\n" << context;
    ASSERT_LE(line, static_cast<int>(lines.size())) << m << "\n" << context;
    const std::string& held = lines[static_cast<std::size_t>(line - 1)];
    const bool ok = held.find(last) != std::string::npos ||
                    (element && held.find_first_not_of(' ') != std::string::npos &&
                     held.compare(held.find_first_not_of(' '), 2, "- ") == 0);
    EXPECT_TRUE(ok) << "line " << line << " '" << held << "' does not hold '" << last << "': " << m << "\n" << context;
    ++located;
  }
  EXPECT_GT(located, 0) << "no file:line: key in: " << message << "\n" << context;
}

template <typename Load>
void fuzz(const std::string& valid, const std::string& name, Load load, int rounds, unsigned seed) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("attnsim_value_errors_" + name);
  fs::create_directories(dir);
  const fs::path file = dir / (name + ".yaml");
  std::mt19937 rng(seed);
  int reported = 0;
  for (int r = 0; r < rounds; ++r) {
    std::string what;
    const std::string text = corrupt(valid, rng, what);
    std::ofstream(file) << text;
    try {
      load(file.string());
    } catch (const core::ConfigError& e) {
      ++reported;
      expect_lines_hold_keys(e.what(), file.string(), text, name + " round " + std::to_string(r) + ", " + what + ":\n" + text);
    }
  }
  // Most corruptions must be caught (a few are valid by chance: "0" for seed, a typo'd name).
  EXPECT_GT(reported, rounds * 3 / 4) << name;
  fs::remove_all(dir);
}

TEST(ValueErrors, FuzzedSweepFilesReportLinesHoldingTheirKeys) {
  fuzz(kSweep, "sweep",
       [](const std::string& path) {
         const SweepSpec spec = SweepLoader::load_file(path);
         SweepExpander{spec};
       },
       300, 24u);
}

TEST(ValueErrors, FuzzedWorkloadFilesReportLinesHoldingTheirKeys) {
  fuzz(kWorkload, "workload", [](const std::string& path) { load_workload_file(path); }, 200, 25u);
}

TEST(ValueErrors, FuzzedDeviceFilesReportLinesHoldingTheirKeys) {
  std::string device;
  for (const auto& dir : device_search_dirs())
    if (fs::exists(fs::path(dir) / "h200.yaml")) {
      device = read(fs::path(dir) / "h200.yaml");
      break;
    }
  ASSERT_FALSE(device.empty());
  fuzz(device, "device", [](const std::string& path) { load_device(path); }, 300, 26u);
}

}  // namespace
}  // namespace attnsim::config
