// Test helpers: the workload a YAML text parses to, and the message of the ConfigError a sweep's or a
// workload's YAML text raises ("" when it loads).
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/config/sweep_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"

namespace attnsim::config::testing {

inline std::string error_of(const std::string& text) {
  try {
    SweepLoader::load_text(text, "s.yaml");
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "";
}

// A workload YAML text as if read from `file` (messages name it).
inline core::Workload parse_workload_text(const std::string& text, const std::string& file) {
  return parse_workload_node(YAML::Load(text), file);
}

inline std::string workload_error_of(const std::string& text, const std::string& file) {
  try {
    parse_workload_text(text, file);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace attnsim::config::testing
