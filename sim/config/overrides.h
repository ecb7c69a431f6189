// Command-line overrides ("--set key=value"): parsed, split into workload and device ones, and
// applied to a YAML tree before it is validated, so overridden values pass the same checks.
// Keys are dotted paths into mappings; list elements cannot be addressed one by one.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "sim/config/yaml_reader.h"

namespace attnsim::config {

struct Override {
  std::string key;    // "l2.capacity_bytes", "seq", "device.l2.capacity_bytes"
  std::string value;  // YAML text: "0", "true", "60 MiB", "[0, 8192]"
  ValueOrigin origin{};  // where problems with the value are reported (default: "--set <key>")
};

// Parses "key=value" strings. Bad syntax (no '=', empty key or value, empty path segment)
// throws ConfigError located at "--set".
std::vector<Override> parse_overrides(const std::vector<std::string>& sets);

// Moves the overrides whose key starts with "device." into `device` (prefix stripped) and
// the others into `workload`. Origins are kept.
void split_overrides(const std::vector<Override>& all, std::vector<Override>& workload,
                     std::vector<Override>& device);

// Writes each override into `root` (creating mappings on the way, replacing whatever was
// there) and marks its path in `reader` so later problems are located at its origin
// ("--set key" by default).
// A value that is not valid YAML, or a path through a non-mapping, is recorded as a problem.
void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides, YamlReader& reader);

}  // namespace attnsim::config
