#include "sim/config/sweep_expander.h"

#include <set>
#include <sstream>

#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/config/yaml_reader.h"
#include "sim/core/errors.h"

namespace attnsim::config {

namespace {

std::optional<std::int64_t> as_integer(const SweepValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  return std::nullopt;
}

SweepValue parse_scalar_text(const std::string& text) {
  try {
    const YAML::Node n = YAML::Load(text);
    if (n.IsScalar()) {
      std::int64_t i = 0;
      if (YAML::convert<std::int64_t>::decode(n, i)) return i;
      if (n.Scalar() == "true" || n.Scalar() == "false") return n.Scalar() == "true";
      return n.Scalar();
    }
  } catch (const YAML::Exception&) {
  }
  return text;
}

std::string join_problems(const std::vector<core::ConfigProblem>& problems) {
  std::string s;
  for (const auto& p : problems) {
    if (!s.empty()) s += "; ";
    s += p.key_path.empty() ? p.message : p.key_path + ": " + p.message;
  }
  return s;
}

}  // namespace

SweepExpander::SweepExpander(const SweepSpec& spec) : spec_(spec) {
  for (const auto& g : spec_.groups) size_ *= g.size();
  // Base + fixed overrides must be a valid workload on their own.
  std::vector<Override> wl, dev;
  split_overrides(spec_.set, wl, dev);
  YAML::Node node = YAML::Clone(spec_.base);
  YamlReader reader(spec_.file);
  apply_workload_overrides(node, wl, reader);
  parse_workload_node(node, reader);
  reader.throw_if_problems();
  // Every device named must load (unknown presets are bad input, not impossible points).
  // Each name with where the sweep file gives it, so an unknown preset is reported at
  // file:line: device.
  std::vector<std::pair<std::string, int>> names;
  if (!spec_.device.empty()) names.emplace_back(spec_.device, spec_.device_line);
  for (const auto& g : spec_.groups)
    for (const auto& a : g.axes)
      if (a.key == "device")
        for (const auto& v : a.values) names.emplace_back(sweep_value_yaml(v), a.line);
  std::vector<core::ConfigProblem> problems;
  for (const auto& [n, line] : names) {
    try {
      device_for(n, dev);
    } catch (const core::ConfigError& e) {
      for (auto p : e.problems()) {
        if (p.file.empty()) {  // a preset name that did not resolve: locate it in the sweep file
          p.file = spec_.file;
          p.line = line;
          p.key_path = "device";
        }
        bool seen = false;  // a bad `set:` device value is reported once, not once per device
        for (const auto& q : problems) seen = seen || q.format() == p.format();
        if (!seen) problems.push_back(p);
      }
    }
  }
  if (!problems.empty()) throw core::ConfigError(problems);
}

std::shared_ptr<const core::DeviceSpec> SweepExpander::device_for(const std::string& name,
                                                                  const std::vector<Override>& overrides) const {
  std::string key = name;
  for (const auto& o : overrides) key += "\n" + o.key + "=" + o.value;
  auto it = devices_.find(key);
  if (it != devices_.end()) return it->second;
  auto d = std::make_shared<const core::DeviceSpec>(load_device(name, overrides));
  devices_.emplace(key, d);
  return d;
}

SweepPoint SweepExpander::point(std::uint64_t index) const {
  SweepPoint p;
  p.index = index;
  // Mixed-radix decode: the last group varies fastest.
  std::vector<std::size_t> pos(spec_.groups.size());
  std::uint64_t rest = index;
  for (std::size_t g = spec_.groups.size(); g-- > 0;) {
    pos[g] = static_cast<std::size_t>(rest % spec_.groups[g].size());
    rest /= spec_.groups[g].size();
  }
  std::map<std::string, SweepValue> env;
  for (const auto& kv : spec_.base)
    if (kv.second.IsScalar()) env[kv.first.Scalar()] = parse_scalar_text(kv.second.Scalar());
  for (const auto& o : spec_.set) env[o.key] = parse_scalar_text(o.value);
  for (std::size_t g = 0; g < spec_.groups.size(); ++g)
    for (const auto& a : spec_.groups[g].axes) {
      p.params.emplace_back(a.key, a.values[pos[g]]);
      if (is_unset(a.values[pos[g]])) env.erase(a.key);  // not set: not a known name here
      else env[a.key] = a.values[pos[g]];
    }
  const auto lookup = [&env](const std::string& n) -> std::optional<std::int64_t> {
    auto it = env.find(n);
    return it == env.end() ? std::nullopt : as_integer(it->second);
  };
  std::string device_name = spec_.device;
  auto fail = [&p](std::string why) {
    p.possible = false;
    p.reason = std::move(why);
  };
  for (const auto& d : spec_.derived) {
    try {
      const SweepValue v{d.expression.evaluate(lookup)};
      p.params.emplace_back(d.key, v);
      env[d.key] = v;
    } catch (const std::domain_error& e) {
      fail("derived " + d.key + ": " + e.what());
      p.params.emplace_back(d.key, SweepValue{std::string()});
    }
  }
  for (const auto& [k, v] : p.params)
    if (k == "device") device_name = sweep_value_yaml(v);
  bool device_is_axis = false;
  for (const auto& g : spec_.groups)
    for (const auto& a : g.axes) device_is_axis = device_is_axis || a.key == "device";
  if (!device_is_axis) p.params.emplace_back("device", SweepValue{device_name});

  std::ostringstream raw;
  for (const auto& [k, v] : p.params) raw << k << ": " << sweep_value_yaml(v) << "\n";
  p.config_yaml = raw.str();
  if (!p.possible) return p;

  for (const auto& c : spec_.constraints) {
    try {
      if (c.expression.evaluate(lookup) == 0) {
        std::string values;
        for (const auto& n : c.expression.names())
          values += (values.empty() ? "" : ", ") + n + "=" + (lookup(n) ? std::to_string(*lookup(n)) : "?");
        fail("constraint '" + c.expression.text() + "' is false (" + values + ")");
        return p;
      }
    } catch (const std::domain_error& e) {
      fail("constraint '" + c.expression.text() + "': " + e.what());
      return p;
    }
  }

  // A null axis value unsets its key: no override from the axis, none from set, none in base.
  std::set<std::string> unset;
  for (const auto& [k, v] : p.params)
    if (is_unset(v)) unset.insert(k);
  std::vector<Override> all;
  for (const auto& o : spec_.set)
    if (!unset.count(o.key)) all.push_back(o);
  for (const auto& [k, v] : p.params)
    if (k != "device" && !is_unset(v))
      all.push_back({k, sweep_value_yaml(v), {"", 0, k}});  // reasons name the key itself
  std::vector<Override> wl, dev;
  split_overrides(all, wl, dev);
  YAML::Node node = YAML::Clone(spec_.base);
  for (const auto& k : unset)
    if (k.rfind("device.", 0) != 0) node.remove(k);
  YamlReader reader(spec_.file);
  apply_workload_overrides(node, wl, reader);
  if (!reader.has_problems()) p.workload = parse_workload_node(node, reader);
  if (reader.has_problems()) {
    fail(join_problems(reader.problems()));
    return p;
  }
  try {
    p.device = device_for(device_name, dev);
  } catch (const core::ConfigError& e) {
    fail(join_problems(e.problems()));
    return p;
  }
  p.config_yaml = point_config_yaml(p.workload, device_name, dev);
  return p;
}

}  // namespace attnsim::config
