// The simulated side of `attnsim compare`: per point, its resolved workload (the point's config
// YAML) and per kernel its metrics, read from a results HDF5 file (docs/hdf5-schema.md layout:
// /points/<i>/{config, kernels/<k>_<name>/metrics}). Only "ok" points; no series or tensors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnsim::app {

struct SimulatedKernel {
  std::uint64_t index = 0;   // launch order within the point
  std::string name;          // e.g. "flash2_fwd"
  std::map<std::string, double> metrics;
};

struct SimulatedPoint {
  std::uint64_t index = 0;                    // /points/<index>
  std::map<std::string, std::string> config;  // resolved workload keys (and "device"), as text
  std::vector<SimulatedKernel> kernels;       // ascending index

  std::string value(const std::string& key) const;  // "" when absent
  std::optional<std::uint64_t> count(const std::string& key) const;
};

class CompareSimulatedReader {
 public:
  // Throws core::ConfigError naming the file when it is missing, not HDF5, or has no /points
  // group or a point whose config or kernel metrics cannot be read.
  static std::vector<SimulatedPoint> read(const std::string& path);

  // Parses a point's config text: a flat YAML mapping of scalars, or one with a `workload`
  // mapping (whose keys win) and a `device` scalar or mapping with a `name`.
  static std::map<std::string, std::string> parse_config(const std::string& yaml_text);
};

}  // namespace attnsim::app
