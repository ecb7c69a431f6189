// Device presets: YAML (configs/devices/*.yaml) -> validated core::DeviceSpec, strictly (unknown
// keys, types, ranges, cross-field limits, all problems at once), and back to YAML text.
// Timing numbers are taken as given; nothing here checks them against silicon.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "sim/config/overrides.h"
#include "sim/config/yaml_reader.h"
#include "sim/core/device_spec.h"

namespace attnsim::config {

// `name_or_path` is a path when it ends in .yaml/.yml or contains '/', else a preset name
// looked up as <dir>/<name>.yaml in device_search_dirs(). `device_overrides` have keys like
// "l2.capacity_bytes" ("device." already stripped) and are applied before validation.
// Throws core::ConfigError (an unknown preset lists the available ones).
core::DeviceSpec load_device(const std::string& name_or_path, const std::vector<Override>& device_overrides = {});

// The problems with the overridden values themselves (ProblemKind::kValue: type, range, choice,
// unknown key), located at each override's origin; rules across keys are left out. The same
// validation as load_device. Throws core::ConfigError when the device itself cannot be read.
std::vector<core::ConfigProblem> device_value_problems(const std::string& name_or_path,
                                                       const std::vector<Override>& device_overrides);

// Validates a device mapping, recording problems in `reader` (the caller throws).
core::DeviceSpec parse_device_node(const YAML::Node& node, YamlReader& reader);

// The spec as device YAML that load_device reads back to an equal spec.
std::string device_to_yaml(const core::DeviceSpec& d);

// Preset directories in lookup order: $ATTNSIM_CONFIG_DIR/devices (and $ATTNSIM_CONFIG_DIR
// itself), <source tree>/configs/devices, <executable dir>/../configs/devices.
std::vector<std::string> device_search_dirs();
// Sorted preset names (file stems) found in the first search directory that has any.
std::vector<std::string> device_preset_names();

}  // namespace attnsim::config
