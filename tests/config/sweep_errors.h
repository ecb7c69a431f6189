// Test helper: the message of the ConfigError a sweep's YAML text raises ("" when it loads).
#pragma once

#include <string>

#include "sim/config/sweep_loader.h"
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

}  // namespace attnsim::config::testing
