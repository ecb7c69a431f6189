// Workloads: YAML mappings of the workload keys of docs/cli.md -> validated core::Workload
// (unknown keys with a suggestion, types, zero sizes, heads % kv_heads, 64-bit overflow) and
// back to YAML text. Kernel-specific limits (tiles that fit) are checked by the kernels.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "sim/config/overrides.h"
#include "sim/config/yaml_reader.h"
#include "sim/core/workload.h"

namespace attnsim::config {

// Kernel names a workload may ask for.
const std::vector<std::string>& known_kernel_names();

// The device a workload file names for itself, as the config of a result's point carries it
// (docs/hdf5-schema.md): `device:` (a preset name or device YAML path) and `device_overrides:`
// (a mapping of device keys to values), each override located at its line in the file.
struct WorkloadFileDevice {
  std::string name;                 // "" when the file has no `device:`
  std::vector<Override> overrides;
};

// The device a run uses: `given` (--device) when not empty, else the file's own device with its
// overrides put before `device_overrides` (the --set device.* ones), else `fallback` ("" when
// the caller has none: then "" is returned).
std::string device_for_run(const std::string& given, const WorkloadFileDevice& file,
                           std::vector<Override>& device_overrides, const std::string& fallback);

// A workload file (a YAML mapping of workload keys) with --set overrides applied before
// validation. Throws core::ConfigError with every problem. The file's `device:` and
// `device_overrides:` are checked and go to `device` (a caller without one refuses them).
core::Workload load_workload_file(const std::string& path, const std::vector<Override>& overrides = {},
                                  WorkloadFileDevice* device = nullptr);

// The defaults for `kernel` with overrides applied (for `run --kernel NAME`).
core::Workload workload_for_kernel(const std::string& kernel, const std::vector<Override>& overrides = {});

// Validates a workload mapping; `file` names it in messages. Throws core::ConfigError.
core::Workload parse_workload_node(const YAML::Node& node, const std::string& file);
// The same, recording problems in `reader` instead of throwing.
core::Workload parse_workload_node(const YAML::Node& node, YamlReader& reader);

// The problems with the overridden values themselves (ProblemKind::kValue: type, range, choice,
// unknown key), each located at its override's origin, from the same validation as
// parse_workload_node applied to a mapping of just these keys; rules across keys are left out.
std::vector<core::ConfigProblem> workload_value_problems(const std::vector<Override>& overrides,
                                                         const std::string& file);

// The kernels' own checks (tiles that fit the device, keys a device cannot honour) run after
// loading and name only a workload key. Locates each such problem of `e` (no file yet) where the
// key was given: at its --set override (as "--set KEY", or the override's own origin), else at its
// line in the workload file `path` (none: "" for `run --kernel`); other problems are kept as they are.
core::ConfigError locate_workload_problems(const core::ConfigError& e, const std::string& path,
                                           const std::vector<Override>& overrides);

// Applies overrides to a workload mapping; "seq" also drops seq_q/seq_kv already there.
void apply_workload_overrides(YAML::Node& node, const std::vector<Override>& overrides, YamlReader& reader);

// The resolved workload as YAML (every key, kv_heads resolved); parse_workload_node reads it
// back to an equal workload.
std::string workload_to_yaml(const core::Workload& w);

// A result point's config (docs/hdf5-schema.md): workload_to_yaml, then `device: DEVICE` (a
// preset name or device YAML path) and, when there are any, `device_overrides:`. A workload
// file in itself: `attnsim run --workload` reruns the point from it.
std::string point_config_yaml(const core::Workload& w, const std::string& device,
                              const std::vector<Override>& device_overrides);

}  // namespace attnsim::config
