#include "sim/config/sweep_loader.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/config/device_loader.h"
#include "sim/config/input_file.h"
#include "sim/config/workload_loader.h"
#include "sim/config/yaml_reader.h"
#include "sim/core/errors.h"
#include "sim/core/workload.h"

namespace attnsim::config {

namespace {

const std::set<std::string_view> kWorkloadKeys(core::workload_keys().begin(), core::workload_keys().end());
const std::set<std::string> kTopKeys = {"name", "device", "set", "base", "axes", "derived", "constraints"};

// Null means "not set" only as an axis value; in base or set the key is simply left out.
const char* const kNullOutsideAxis =
    "got nothing (null): leave the key out for its default (null means 'not set' only in an axis list)";

bool is_param_key(const std::string& k) {
  return kWorkloadKeys.count(k) || k == "device" || (k.rfind("device.", 0) == 0 && k.size() > 7);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& file, const std::vector<Override>& sets)
      : reader_(file), sets_(sets) {
    spec_.file = file;
    spec_.text = text;
  }

  SweepSpec run() {
    YAML::Node root;
    try {
      root = YAML::Load(spec_.text);
    } catch (const YAML::Exception& e) {
      reader_.problem_at_line(e.mark.line + 1, "", "not valid YAML: " + e.msg);
      reader_.throw_if_problems();
    }
    if (!root.IsMap()) {
      reader_.problem(root, "", "a sweep file must be a mapping (base, device, axes, ...)");
      reader_.throw_if_problems();
    }
    std::set<std::string> seen;
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      if (!seen.insert(key).second) {
        reader_.problem(kv.first, key, "duplicate key");
        continue;
      }
      if (!kTopKeys.count(key)) {
        reader_.problem(kv.first, key, "unknown key (expected one of: axes, base, constraints, derived, device, name, set)");
        continue;
      }
      const YAML::Node& v = kv.second;
      if (key == "name") spec_.name = reader_.as_string(v, key).value_or("");
      else if (key == "device") {
        spec_.device = reader_.as_string(v, key).value_or("");
        spec_.device_line = YamlReader::line_of(v);
      }
      else if (key == "base") parse_base(v);
      else if (key == "set") parse_set(v);
      else if (key == "axes") parse_axes(v);
      else if (key == "derived") parse_derived(v);
      else parse_constraints(v);
    }
    merge_command_line_sets();
    if (spec_.device.empty() && !axis_keys_.count("device"))
      reader_.problem_at_line(1, "device", "missing: give a device preset (or a 'device' axis)");
    if (!spec_.base.IsDefined() || spec_.base.IsNull()) spec_.base = YAML::Node(YAML::NodeType::Map);
    check_names();
    if (!reader_.has_problems()) check_values();
    reader_.throw_if_problems();
    return std::move(spec_);
  }

 private:
  void parse_base(const YAML::Node& v) {
    if (!v.IsMap()) {
      reader_.problem(v, "base", "expected a mapping of workload keys, got " + YamlReader::node_kind(v));
      return;
    }
    std::set<std::string> seen;
    for (const auto& kv : v) {
      const std::string k = kv.first.Scalar();
      if (!seen.insert(k).second) reader_.problem(kv.first, "base." + k, "duplicate key");
      if (kv.second.IsNull()) reader_.problem(kv.second, "base." + k, kNullOutsideAxis);
      if (kv.second.IsScalar()) known_.insert(k);
    }
    spec_.base = YAML::Clone(v);
    base_node_ = v;
  }

  void parse_set(const YAML::Node& v) {
    if (!v.IsMap()) {
      reader_.problem(v, "set", "expected a mapping of key: value, got " + YamlReader::node_kind(v));
      return;
    }
    std::set<std::string> seen;
    for (const auto& kv : v) {
      const std::string k = kv.first.Scalar();
      if (!seen.insert(k).second) {
        reader_.problem(kv.first, "set." + k, "duplicate key");
        continue;
      }
      if (!is_param_key(k) || k == "device") {
        reader_.problem(kv.first, "set." + k, "unknown key (expected a workload key or device.<path>)");
        continue;
      }
      if (kv.second.IsNull()) {
        reader_.problem(kv.second, "set." + k, kNullOutsideAxis);
        continue;
      }
      spec_.set.push_back({k, YAML::Dump(kv.second), {reader_.file(), YamlReader::line_of(kv.first), "set." + k}});
      known_.insert(k);
    }
  }

  // `attnsim sweep --set KEY=VALUE`: after the file's set (replacing its entry of the same key),
  // reported at "--set KEY" (the override's default origin).
  void merge_command_line_sets() {
    for (const Override& o : sets_) {
      const std::string path = "--set " + o.key;
      if (!is_param_key(o.key) || o.key == "device") {
        reader_.add({"", 0, path, "unknown key (expected a workload key or device.<path>)"});
        continue;
      }
      if (axis_keys_.count(o.key)) {
        reader_.add({"", 0, path, "the sweep varies this key (an axis or derived value); change it in the sweep file"});
        continue;
      }
      std::erase_if(spec_.set, [&](const Override& x) { return x.key == o.key; });
      spec_.set.push_back({o.key, o.value, {}});
      known_.insert(o.key);
      spec_.text += (spec_.text.empty() || spec_.text.back() == '\n' ? "" : "\n");
      spec_.text += "# attnsim sweep --set " + o.key + "=" + o.value + "\n";
    }
  }

  // `structured`: the key takes lists and mappings too (kv_lengths), kept as their YAML text.
  std::optional<SweepValue> scalar(const YAML::Node& n, const std::string& path, bool structured) {
    if (n.IsNull()) return SweepValue{std::monostate{}};  // `~` / `null`: the key is not set
    if (structured && (n.IsSequence() || n.IsMap())) {
      YAML::Emitter e;
      e << YAML::Flow << n;
      return SweepValue{std::string(e.c_str())};
    }
    if (!n.IsScalar()) {
      reader_.problem(n, path, "expected a scalar value, got " + YamlReader::node_kind(n));
      return std::nullopt;
    }
    const std::string s = n.Scalar();
    std::int64_t i = 0;
    if (n.Tag() != "!" && YAML::convert<std::int64_t>::decode(n, i)) return SweepValue{i};
    if (n.Tag() != "!" && (lower(s) == "true" || lower(s) == "false")) return SweepValue{lower(s) == "true"};
    double d = 0;
    if (n.Tag() != "!" && YAML::convert<double>::decode(n, d)) return SweepValue{d};
    return SweepValue{s};
  }

  // A list, {start, stop, step} (stop inclusive) or {pow2: [lo, hi]} (powers of two lo..hi).
  // Also appends to `origins` where each value was written (for the value checks).
  std::vector<SweepValue> axis_values(const YAML::Node& v, const std::string& path, std::vector<ValueOrigin>& origins,
                                      bool structured) {
    std::vector<SweepValue> out;
    const ValueOrigin whole{reader_.file(), YamlReader::line_of(v), path};
    if (v.IsSequence()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string element = path + "[" + std::to_string(i) + "]";
        if (auto s = scalar(v[i], element, structured)) {
          out.push_back(*s);
          if (is_unset(*s) && (path == "axes.device" || path == "axes.zip.device"))
            reader_.problem(v[i], element, "a device axis needs a preset name at every point, got nothing (null)");
          origins.push_back({reader_.file(), YamlReader::line_of(v[i]), element});
        }
      }
      if (v.size() == 0) reader_.problem(v, path, "empty axis: give at least one value");
      return out;
    }
    if (v.IsMap() && v["pow2"]) {
      if (v.size() != 1) reader_.problem(v, path, "pow2 takes no other keys");
      const YAML::Node p = v["pow2"];
      if (!p.IsSequence() || p.size() != 2) {
        reader_.problem(p, path + ".pow2", "expected [lo, hi]");
        return out;
      }
      auto lo = reader_.as_u64(p[0], path + ".pow2[0]");
      auto hi = reader_.as_u64(p[1], path + ".pow2[1]");
      if (!lo || !hi) return out;
      const auto is_pow2 = [](std::uint64_t x) { return x && !(x & (x - 1)); };
      if (!is_pow2(*lo) || !is_pow2(*hi)) reader_.problem(p, path + ".pow2", "lo and hi must be powers of two");
      else if (*lo > *hi) reader_.problem(p, path + ".pow2", "lo must not exceed hi");
      else
        for (std::uint64_t x = *lo; x <= *hi && x != 0; x *= 2) {
          out.push_back(SweepValue{static_cast<std::int64_t>(x)});
          origins.push_back(whole);
        }
      return out;
    }
    if (v.IsMap() && v["start"]) {
      for (const auto& kv : v)
        if (kv.first.Scalar() != "start" && kv.first.Scalar() != "stop" && kv.first.Scalar() != "step")
          reader_.problem(kv.first, path + "." + kv.first.Scalar(), "unknown key (expected start, stop, step)");
      const auto start = reader_.as_i64(v["start"], path + ".start");
      if (!v["stop"]) reader_.problem(v, path + ".stop", "missing");
      const auto stop = v["stop"] ? reader_.as_i64(v["stop"], path + ".stop") : std::optional<std::int64_t>();
      const auto step = v["step"] ? reader_.as_i64(v["step"], path + ".step") : std::optional<std::int64_t>(1);
      if (!start.has_value() || !stop.has_value() || !step.has_value()) return out;
      const std::int64_t a = start.value(), b = stop.value(), d = step.value();
      if (d <= 0) reader_.problem(v["step"], path + ".step", "must be positive");
      else if (a > b) reader_.problem(v, path, "empty range: start > stop");
      else if ((b - a) / d >= 1000000) reader_.problem(v, path, "range has more than 1,000,000 values");
      else
        for (std::int64_t x = a; x <= b; x += d) {
          out.push_back(SweepValue{x});
          origins.push_back(whole);
        }
      return out;
    }
    reader_.problem(v, path, "expected a list, {start, stop, step} or {pow2: [lo, hi]}, got " + YamlReader::node_kind(v));
    return out;
  }

  void add_axis(SweepAxisGroup& g, const YAML::Node& key_node, const YAML::Node& v, const std::string& prefix) {
    const std::string k = key_node.Scalar();
    const std::string path = prefix + k;
    if (!is_param_key(k)) {
      reader_.problem(key_node, path, "unknown axis (expected a workload key, 'device' or device.<path>)");
      return;
    }
    if (!axis_keys_.insert(k).second) {
      reader_.problem(key_node, path, "duplicate axis");
      return;
    }
    known_.insert(k);
    std::vector<ValueOrigin> origins;
    // kv_lengths: the one workload key whose values may be lists or mappings.
    SweepAxis a{k, axis_values(v, path, origins, k == "kv_lengths"), YamlReader::line_of(key_node)};
    for (std::size_t i = 0; i < a.values.size() && i < origins.size(); ++i)
      if (!is_unset(a.values[i]))  // null: nothing to check, the key's default applies
        axis_values_.push_back({k, sweep_value_yaml(a.values[i]), origins[i]});
    g.axes.push_back(std::move(a));
  }

  void parse_axes(const YAML::Node& v) {
    if (!v.IsMap()) {
      reader_.problem(v, "axes", "expected a mapping of axis: values, got " + YamlReader::node_kind(v));
      return;
    }
    for (const auto& kv : v) {
      if (kv.first.Scalar() == "zip") {
        if (!kv.second.IsMap() || kv.second.size() == 0) {
          reader_.problem(kv.second, "axes.zip", "expected a non-empty mapping of axes that vary together");
          continue;
        }
        SweepAxisGroup g;
        for (const auto& z : kv.second) add_axis(g, z.first, z.second, "axes.zip.");
        for (const auto& a : g.axes)
          if (a.values.size() != g.axes[0].values.size())
            reader_.problem_at_line(a.line, "axes.zip." + a.key,
                                    "zipped axes need equal lengths (" + std::to_string(a.values.size()) + " vs " +
                                        std::to_string(g.axes[0].values.size()) + " for " + g.axes[0].key + ")");
        if (!g.axes.empty()) spec_.groups.push_back(std::move(g));
        continue;
      }
      SweepAxisGroup g;
      add_axis(g, kv.first, kv.second, "axes.");
      if (!g.axes.empty()) spec_.groups.push_back(std::move(g));
    }
  }

  void parse_derived(const YAML::Node& v) {
    if (!v.IsMap()) {
      reader_.problem(v, "derived", "expected a mapping of key: \"{expression}\", got " + YamlReader::node_kind(v));
      return;
    }
    for (const auto& kv : v) {
      const std::string k = kv.first.Scalar();
      const std::string path = "derived." + k;
      if (!is_param_key(k) || k == "device") {
        reader_.problem(kv.first, path, "unknown key (expected a workload key or device.<path>)");
        continue;
      }
      if (axis_keys_.count(k)) {
        reader_.problem(kv.first, path, "duplicate: already an axis or derived value");
        continue;
      }
      std::string s = kv.second.IsScalar() ? kv.second.Scalar() : "";
      if (s.size() < 2 || s.front() != '{' || s.back() != '}') {
        reader_.problem(kv.second, path, "expected a quoted \"{expression}\", e.g. \"{seq_q}\"");
        continue;
      }
      try {
        SweepExpression e(s.substr(1, s.size() - 2));
        pending_.push_back({path, YamlReader::line_of(kv.second), e.names()});
        spec_.derived.push_back({k, std::move(e), YamlReader::line_of(kv.second)});
        axis_keys_.insert(k);
        known_.insert(k);
      } catch (const std::invalid_argument& e) {
        reader_.problem(kv.second, path, e.what());
      }
    }
  }

  void parse_constraints(const YAML::Node& v) {
    if (!v.IsSequence()) {
      reader_.problem(v, "constraints", "expected a list of expressions, got " + YamlReader::node_kind(v));
      return;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string path = "constraints[" + std::to_string(i) + "]";
      auto s = reader_.as_string(v[i], path);
      if (!s) continue;
      try {
        SweepExpression e(*s);
        pending_.push_back({path, YamlReader::line_of(v[i]), e.names()});
        spec_.constraints.push_back({std::move(e), YamlReader::line_of(v[i])});
      } catch (const std::invalid_argument& e) {
        reader_.problem(v[i], path, e.what());
      }
    }
  }

  // Every name an expression uses must be an axis, a derived value, a base or a set key.
  void check_names() {
    for (const auto& p : pending_)
      for (const auto& n : p.names)
        if (!known_.count(n))
          reader_.problem_at_line(p.line, p.path, "unknown name '" + n + "' (not an axis, derived value, base or set key)");
  }

  // A value wrong in itself is bad input wherever it appears: base and set together must be a
  // valid workload (checked as `attnsim run` checks a workload file, located at their lines),
  // and every axis value must pass its key's own checks (the loaders' kValue problems: type,
  // range, choice), through the same validation as a workload or device file. Only a
  // combination of valid values may become an impossible point.
  void check_values() {
    std::vector<Override> workload, device;
    split_overrides(spec_.set, workload, device);
    YAML::Node base = base_node_.IsDefined() && base_node_.IsMap() ? base_node_ : YAML::Node(YAML::NodeType::Map);
    YamlReader base_reader(reader_.file());
    base_reader.set_key_prefix("base.");
    apply_workload_overrides(base, workload, base_reader);
    parse_workload_node(base, base_reader);
    for (const auto& p : base_reader.problems()) reader_.add(p);

    std::string device_name = spec_.device;
    for (const auto& o : axis_values_)
      if (device_name.empty() && o.key == "device") device_name = o.value;
    if (!device.empty() && !device_name.empty()) {
      try {
        for (const auto& p : device_value_problems(device_name, device)) reader_.add(p);
      } catch (const core::ConfigError&) {
        // the device itself does not load: SweepExpander reports it
      }
    }
    for (const auto& o : axis_values_) {
      if (o.key == "device") continue;  // preset names: SweepExpander loads each one
      std::vector<core::ConfigProblem> problems;
      if (o.key.rfind("device.", 0) == 0) {
        try {
          problems = device_value_problems(device_name, {{o.key.substr(7), o.value, o.origin}});
        } catch (const core::ConfigError&) {
          continue;  // the device itself does not load: SweepExpander reports it
        }
      } else {
        problems = workload_value_problems({o}, reader_.file());
      }
      for (const auto& p : problems) reader_.add(p);
    }
  }

  struct Pending {
    std::string path;
    int line;
    std::vector<std::string> names;
  };
  YamlReader reader_;
  SweepSpec spec_;
  std::set<std::string> axis_keys_;
  const std::vector<Override>& sets_;  // from the command line
  std::set<std::string> known_;
  std::vector<Pending> pending_;
  YAML::Node base_node_;               // the base mapping as read (its lines), for check_values
  std::vector<Override> axis_values_;  // every axis value with its key and origin
};

}  // namespace

std::string sweep_value_yaml(const SweepValue& v) {
  if (is_unset(v)) return "~";
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* d = std::get_if<double>(&v)) {
    std::ostringstream s;
    s.precision(17);
    s << *d;
    return s.str();
  }
  YAML::Emitter e;
  e << std::get<std::string>(v);
  return e.c_str();
}

std::size_t SweepSpec::point_count() const {
  std::size_t n = 1;
  for (const auto& g : groups) n *= g.size();
  return n;
}

SweepSpec SweepLoader::load_text(const std::string& text, const std::string& file, const std::vector<Override>& sets) {
  return Parser(text, file, sets).run();
}

SweepSpec SweepLoader::load_file(const std::string& path, const std::vector<Override>& sets) {
  require_readable_file(path, "", "sweep file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::ConfigError(core::ConfigProblem{path, 0, "", "cannot open sweep file"});
  std::ostringstream s;
  s << in.rdbuf();
  return load_text(s.str(), path, sets);
}

}  // namespace attnsim::config
