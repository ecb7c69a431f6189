#include "sim/config/overrides.h"

#include "sim/core/errors.h"

namespace attnsim::config {

namespace {

std::vector<std::string> split_path(const std::string& key) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : key) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::vector<Override> parse_overrides(const std::vector<std::string>& sets) {
  std::vector<core::ConfigProblem> problems;
  std::vector<Override> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos) {
      problems.push_back({"", 0, "--set", "expected key=value, got '" + s + "'"});
      continue;
    }
    Override o{trim(s.substr(0, eq)), trim(s.substr(eq + 1))};
    bool bad_path = o.key.empty();
    for (const auto& part : split_path(o.key)) bad_path = bad_path || part.empty();
    if (bad_path) {
      problems.push_back({"", 0, "--set", "expected a dotted key before '=', got '" + s + "'"});
      continue;
    }
    if (o.value.empty()) {
      problems.push_back({"", 0, "--set " + o.key, "missing value after '='"});
      continue;
    }
    out.push_back(std::move(o));
  }
  if (!problems.empty()) throw core::ConfigError(problems);
  return out;
}

void split_overrides(const std::vector<Override>& all, std::vector<Override>& workload,
                     std::vector<Override>& device) {
  const std::string prefix = "device.";
  for (const auto& o : all) {
    if (o.key.rfind(prefix, 0) == 0) {
      device.push_back({o.key.substr(prefix.size()), o.value, o.origin});
    } else {
      workload.push_back(o);
    }
  }
}

void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides, YamlReader& reader) {
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const auto& o : overrides) {
    reader.mark_overridden(o.key, o.origin);
    YAML::Node value;
    try {
      value = YAML::Load(o.value);
    } catch (const YAML::Exception& e) {
      reader.problem_at_line(0, o.key, "value is not valid YAML: " + e.msg);
      continue;
    }
    const auto parts = split_path(o.key);
    YAML::Node cur = root;
    std::string walked;
    bool ok = true;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      walked += (walked.empty() ? "" : ".") + parts[i];
      if (!cur.IsMap()) {
        reader.problem_at_line(0, o.key, "'" + walked + "' is not a mapping");
        ok = false;
        break;
      }
      const YAML::Node existing = static_cast<const YAML::Node&>(cur)[parts[i]];
      if (!existing.IsDefined() || existing.IsNull()) cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
      YAML::Node next;
      next.reset(cur[parts[i]]);
      cur.reset(next);
    }
    if (!ok) continue;
    if (!cur.IsMap()) {
      reader.problem_at_line(0, o.key, "the parent of this key is not a mapping");
      continue;
    }
    cur[parts.back()] = value;
  }
}

}  // namespace attnsim::config
