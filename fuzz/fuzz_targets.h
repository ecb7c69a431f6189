// What each fuzz target does with one input, shared by the libFuzzer entry points (fuzz/*.cpp)
// and the regression test that replays saved crashers (tests/io/fuzz_regression_test.cpp).
// core::ConfigError (and malformed YAML before validation) is the expected outcome and is
// swallowed; anything else escapes or aborts, which is a finding. No coverage of the engine.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/config/config.h"
#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_loader.h"
#include "sim/core/errors.h"
#include "sim/io/ncu_csv_reader.h"

namespace attnsim::fuzz {

// Parses YAML text; false when it is not YAML (the loaders report that as a ConfigError).
inline bool load_yaml(const std::string& text, YAML::Node& node) {
  try {
    node = YAML::Load(text);
    return true;
  } catch (const YAML::ParserException&) {
    return false;
  }
}

// Device YAML validation, then the device_to_yaml round trip must validate again.
inline void device_yaml(const std::string& text) {
  YAML::Node node;
  if (!load_yaml(text, node)) return;
  core::DeviceSpec spec;
  try {
    config::YamlReader reader("fuzz-device.yaml");
    spec = config::parse_device_node(node, reader);
    reader.throw_if_problems();
  } catch (const core::ConfigError&) {
    return;
  }
  config::YamlReader again("fuzz-device-roundtrip.yaml");
  config::parse_device_node(YAML::Load(config::device_to_yaml(spec)), again);
  if (again.has_problems()) std::abort();
}

// Workload YAML validation, then the workload_to_yaml round trip must validate again.
inline void workload_yaml(const std::string& text) {
  YAML::Node node;
  if (!load_yaml(text, node)) return;
  core::Workload w;
  try {
    w = config::parse_workload_node(node, "fuzz-workload.yaml");
  } catch (const core::ConfigError&) {
    return;
  }
  config::parse_workload_node(YAML::Load(config::workload_to_yaml(w)), "fuzz-workload-roundtrip.yaml");
}

// Sweep loading and expansion: the first kPoints points and the last one. A problem located in
// the sweep file must name a line the file has (one past the last for an unexpected end).
inline void sweep(const std::string& text) {
  constexpr std::uint64_t kPoints = 16;
  try {
    const config::SweepSpec spec = config::SweepLoader::load_text(text, "fuzz-sweep.yaml");
    const config::SweepExpander expander(spec);
    const std::uint64_t n = expander.size();
    for (std::uint64_t i = 0; i < std::min(n, kPoints); ++i) expander.point(i);
    if (n > kPoints) expander.point(n - 1);
  } catch (const core::ConfigError& e) {
    const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    for (const auto& p : e.problems())
      if (p.file == "fuzz-sweep.yaml" && (p.line < 0 || p.line > lines + 1)) std::abort();
  }
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

// --set: the first line is the kernel name for `run --kernel`, each further line one --set
// argument; overrides are parsed, split and applied to that kernel's workload and to h200.
inline void set_overrides(const std::string& text) {
  std::vector<std::string> lines = split_lines(text);
  if (lines.empty()) return;
  const std::string kernel = lines.front();
  lines.erase(lines.begin());
  try {
    std::vector<config::Override> workload_overrides, device_overrides;
    config::split_overrides(config::parse_overrides(lines), workload_overrides, device_overrides);
    config::workload_for_kernel(kernel, workload_overrides);
    if (!device_overrides.empty()) config::load_device("h200", device_overrides);
  } catch (const core::ConfigError&) {
  }
}

// Measured CSV (ncu raw export or reference layout), and the whole text as one number cell.
inline void ncu_csv(const std::string& text) {
  if (text.size() < 64) io::NcuCsvReader::parse_number(text);
  try {
    io::NcuCsvReader::parse(text, "fuzz.csv");
  } catch (const core::ConfigError&) {
  }
}

}  // namespace attnsim::fuzz
