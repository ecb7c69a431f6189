// A parsed sweep file: base workload mapping, device, fixed --set-style overrides, axes (each a
// list of scalar values; zipped axes share one position), derived values and constraints.
// Plain data produced by SweepLoader; expansion into points is SweepExpander's job.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "sim/config/overrides.h"
#include "sim/config/sweep_expression.h"

namespace attnsim::config {

// std::monostate: YAML null (`~`, `null`) in an axis list, "this key is not set at this point"
// (the default applies, as if the key were absent from base and set).
using SweepValue = std::variant<std::int64_t, double, bool, std::string, std::monostate>;
std::string sweep_value_yaml(const SweepValue& v);  // as YAML scalar text ("128", "true", "h200", "~")
inline bool is_unset(const SweepValue& v) { return std::holds_alternative<std::monostate>(v); }

// One named parameter and its values (a null one leaves the key unset at its point). Keys: a
// workload key ("block_m", "seq"), "device" (a preset name or path), or "device.<path>" (a device
// override).
struct SweepAxis {
  std::string key;
  std::vector<SweepValue> values;
  int line = 0;
};

// Axes that vary together: all have the same number of values; point i takes values[i] of each.
// A plain axis is a group of one.
struct SweepAxisGroup {
  std::vector<SweepAxis> axes;
  std::size_t size() const { return axes.empty() ? 0 : axes[0].values.size(); }
};

struct SweepDerived {
  std::string key;
  SweepExpression expression;  // from "{...}"
  int line = 0;
};

struct SweepConstraint {
  SweepExpression expression;
  int line = 0;
};

struct SweepSpec {
  std::string file;
  std::string text;                 // the file as read (provenance, hash)
  std::string name;
  std::string device;               // default device when "device" is not an axis
  int device_line = 0;              // the line of `device:` (0 when absent)
  YAML::Node base;                  // workload mapping (cloned per point)
  std::vector<Override> set;        // fixed overrides, workload and "device." ones
  std::vector<SweepAxisGroup> groups;  // cartesian product over groups, first group slowest
  std::vector<SweepDerived> derived;   // evaluated in file order after the axes
  std::vector<SweepConstraint> constraints;

  std::size_t point_count() const;
};

}  // namespace attnsim::config
