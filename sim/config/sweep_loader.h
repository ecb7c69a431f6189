// Reads a sweep YAML file strictly into a SweepSpec: unknown keys, empty or duplicate axes, bad
// ranges, malformed expressions each reported as "file:line: key.path: message", all at once.
// Every value is checked where it is written, by the workload and device loaders' own rules:
// base + set must be a valid workload, and each axis value must pass its key's checks on its own
// ("s.yaml:8: axes.block_n[1]: ..."). Combinations of valid values are left to SweepExpander,
// which records the points they fail as impossible. A null axis value (`~`) leaves its key unset
// at that point; null in base or set, or as a device preset, is bad input.
#pragma once

#include <string>
#include <vector>

#include "sim/config/sweep_spec.h"

namespace attnsim::config {

class SweepLoader {
 public:
  // Throws core::ConfigError (every problem found). `sets`: overrides from the command line
  // (`attnsim sweep --set KEY=VALUE`), applied to every point after the file's `set:` (replacing
  // an entry of the same key) and checked as it is, at "--set KEY"; a key the sweep varies (an
  // axis or derived value) is bad input. Each adds a comment line to the spec's text, so the
  // results' provenance (sweep_text) and an interrupted run's journal name it.
  static SweepSpec load_file(const std::string& path, const std::vector<Override>& sets = {});
  static SweepSpec load_text(const std::string& text, const std::string& file, const std::vector<Override>& sets = {});
};

}  // namespace attnsim::config
