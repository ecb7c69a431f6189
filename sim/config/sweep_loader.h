// Reads a sweep YAML file strictly into a SweepSpec: unknown keys, empty or duplicate axes, bad
// ranges, malformed expressions each reported as "file:line: key.path: message", all at once.
// Every value is checked where it is written, by the workload and device loaders' own rules:
// base + set must be a valid workload, and each axis value must pass its key's checks on its own
// ("s.yaml:8: axes.block_n[1]: ..."). Combinations of valid values are left to SweepExpander,
// which records the points they fail as impossible. A null axis value (`~`) leaves its key unset
// at that point; null in base or set, or as a device preset, is bad input.
#pragma once

#include <string>

#include "sim/config/sweep_spec.h"

namespace attnsim::config {

class SweepLoader {
 public:
  // Throws core::ConfigError (every problem found).
  static SweepSpec load_file(const std::string& path);
  static SweepSpec load_text(const std::string& text, const std::string& file);
};

}  // namespace attnsim::config
