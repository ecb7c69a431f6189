// Reads a sweep YAML file strictly into a SweepSpec: unknown keys, empty or duplicate axes, bad
// ranges, malformed expressions each reported as "file:line: key.path: message", all at once.
// Workload values themselves are validated per point by SweepExpander (parse_workload_node).
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
