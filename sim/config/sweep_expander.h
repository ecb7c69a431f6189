// Turns a SweepSpec into numbered points: axis values (cartesian over groups, zipped within a
// group, last axis fastest), derived values, constraints, and per point the validated workload
// and device. Impossible points keep their reason; nothing is simulated here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/sweep_spec.h"
#include "sim/core/device_spec.h"
#include "sim/core/workload.h"

namespace attnsim::config {

struct SweepPoint {
  std::uint64_t index = 0;
  std::vector<std::pair<std::string, SweepValue>> params;  // axes, derived values, then "device"
  bool possible = true;
  std::string reason;                  // why not possible: failed constraint or invalid config
  core::Workload workload;             // valid when possible
  std::shared_ptr<const core::DeviceSpec> device;  // valid when possible
  std::string config_yaml;             // resolved workload + device (or the raw values when impossible)
};

class SweepExpander {
 public:
  // Checks what holds for every point (base + set is a valid workload, every device preset
  // named loads); throws core::ConfigError otherwise. `spec` must outlive the expander.
  explicit SweepExpander(const SweepSpec& spec);

  std::uint64_t size() const { return size_; }
  // Resolves point `index` (0 <= index < size()). Not thread-safe (YAML nodes, device cache).
  SweepPoint point(std::uint64_t index) const;

 private:
  std::shared_ptr<const core::DeviceSpec> device_for(const std::string& name,
                                                     const std::vector<Override>& overrides) const;

  const SweepSpec& spec_;
  std::uint64_t size_ = 1;
  mutable std::map<std::string, std::shared_ptr<const core::DeviceSpec>> devices_;
};

}  // namespace attnsim::config
