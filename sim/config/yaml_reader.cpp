#include "sim/config/yaml_reader.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

namespace attnsim::config {

YamlReader::YamlReader(std::string file, std::string set_prefix)
    : file_(std::move(file)), set_prefix_(std::move(set_prefix)) {}

void YamlReader::mark_overridden(const std::string& key_path, const ValueOrigin& origin) {
  overridden_[key_path] = origin;
}

namespace {

// The override that `key_path` is at or below (a list element, a sub-key), or else one that
// `key_path` is a parent of (a mapping the override created: "l" for a typo "l.capacity_bytes"),
// or null.
const std::pair<const std::string, ValueOrigin>* override_of(const std::map<std::string, ValueOrigin>& overridden,
                                                            const std::string& key_path) {
  const std::pair<const std::string, ValueOrigin>* best = nullptr;
  for (const auto& entry : overridden) {
    const std::string& k = entry.first;
    if (key_path == k || key_path.rfind(k + ".", 0) == 0 || key_path.rfind(k + "[", 0) == 0)
      if (!best || k.size() > best->first.size()) best = &entry;
  }
  if (best) return best;
  for (const auto& entry : overridden)
    if (!key_path.empty() && entry.first.rfind(key_path + ".", 0) == 0) return &entry;
  return nullptr;
}

}  // namespace

bool YamlReader::overridden(const std::string& key_path) const { return override_of(overridden_, key_path) != nullptr; }

void YamlReader::problem(const YAML::Node& node, const std::string& key_path, const std::string& message,
                         ProblemKind kind) {
  problem_at_line(line_of(node), key_path, message, kind);
}

void YamlReader::problem_at_line(int line, const std::string& key_path, const std::string& message, ProblemKind kind) {
  if (const auto* o = override_of(overridden_, key_path)) {
    const ValueOrigin& origin = o->second;
    if (origin.file.empty() && origin.label.empty()) {
      // A parent mapping the override created is named by the override's whole key.
      const std::string& shown = key_path.size() < o->first.size() ? o->first : key_path;
      problems_.push_back({"", 0, "--set " + set_prefix_ + shown, message});
    } else {
      // The origin's label names the override; a deeper problem keeps the rest of its path.
      const std::string below = key_path.size() > o->first.size() ? key_path.substr(o->first.size()) : "";
      problems_.push_back({origin.file, origin.line, origin.label + below, message});
    }
  } else {
    problems_.push_back({file_, line, key_prefix_ + key_path, message});
  }
  kinds_.push_back(kind);
}

void YamlReader::add(const core::ConfigProblem& p, ProblemKind kind) {
  problems_.push_back(p);
  kinds_.push_back(kind);
}

std::vector<core::ConfigProblem> YamlReader::value_problems() const {
  std::vector<core::ConfigProblem> out;
  for (std::size_t i = 0; i < problems_.size(); ++i)
    if (kinds_[i] == ProblemKind::kValue) out.push_back(problems_[i]);
  return out;
}

int YamlReader::line_of(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

std::string YamlReader::node_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

namespace {

// Parses a whole string as an unsigned decimal integer; false on anything else or overflow.
bool parse_unsigned(const std::string& s, std::uint64_t& out, bool& overflow) {
  overflow = false;
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc::result_out_of_range) {
    overflow = true;
    return false;
  }
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool looks_negative_number(const std::string& s) {
  return s.size() > 1 && s[0] == '-' && (std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.');
}

}  // namespace

std::optional<std::string> YamlReader::as_string(const YAML::Node& node, const std::string& key_path) {
  if (!node.IsScalar()) {
    problem(node, key_path, "expected a string, got " + node_kind(node));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<std::uint64_t> YamlReader::as_u64(const YAML::Node& node, const std::string& key_path,
                                                const std::string& expected) {
  if (!node.IsScalar()) {
    problem(node, key_path, "expected " + expected + ", got " + node_kind(node));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  std::uint64_t v = 0;
  bool overflow = false;
  if (parse_unsigned(s, v, overflow)) return v;
  if (overflow) {
    problem(node, key_path, "'" + s + "' does not fit in 64 bits");
  } else if (looks_negative_number(s)) {
    problem(node, key_path, "expected " + expected + ", got " + s);
  } else {
    problem(node, key_path, "expected " + expected + ", got '" + s + "'");
  }
  return std::nullopt;
}

std::optional<std::int64_t> YamlReader::as_i64(const YAML::Node& node, const std::string& key_path) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty()) return v;
  }
  problem(node, key_path, "expected an integer, got " + node_kind(node));
  return std::nullopt;
}

std::optional<double> YamlReader::as_double(const YAML::Node& node, const std::string& key_path) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty() && std::isfinite(v)) return v;
  }
  problem(node, key_path, "expected a number, got " + node_kind(node));
  return std::nullopt;
}

std::optional<bool> YamlReader::as_bool(const YAML::Node& node, const std::string& key_path) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  problem(node, key_path, "expected true or false, got " + node_kind(node));
  return std::nullopt;
}

std::optional<std::uint64_t> YamlReader::as_bytes(const YAML::Node& node, const std::string& key_path) {
  if (!node.IsScalar()) {
    problem(node, key_path, "expected a byte count, got " + node_kind(node));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  std::uint64_t v = 0;
  bool overflow = false;
  if (parse_unsigned(s, v, overflow)) return v;
  if (overflow) {
    problem(node, key_path, "'" + s + "' does not fit in 64 bits");
    return std::nullopt;
  }
  if (looks_negative_number(s)) {
    problem(node, key_path, "must not be negative, got " + s);
    return std::nullopt;
  }
  // "<number> <unit>"
  static const std::pair<const char*, double> kUnits[] = {
      {"B", 1.0},          {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3},         {"MB", 1e6},      {"GB", 1e9},        {"TB", 1e12}};
  const auto space = s.find_first_of(' ');
  if (space != std::string::npos) {
    const std::string number = s.substr(0, space);
    const auto unit_at = s.find_first_not_of(' ', space);
    const std::string unit = unit_at == std::string::npos ? std::string() : s.substr(unit_at);
    double x = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), x);
    if (ec == std::errc() && ptr == number.data() + number.size() && x >= 0) {
      for (const auto& [name, scale] : kUnits) {
        if (unit != name) continue;
        const double bytes = x * scale;
        if (bytes >= 18446744073709551616.0) {
          problem(node, key_path, "'" + s + "' does not fit in 64 bits");
          return std::nullopt;
        }
        if (bytes != std::floor(bytes)) {
          problem(node, key_path, "'" + s + "' is not a whole number of bytes");
          return std::nullopt;
        }
        return static_cast<std::uint64_t>(bytes);
      }
    }
  }
  problem(node, key_path,
          "expected a byte count (an integer, or a number with unit B, KiB, MiB, GiB, KB, MB, GB), got '" + s + "'");
  return std::nullopt;
}

void YamlReader::throw_if_problems() const {
  if (!problems_.empty()) throw core::ConfigError(problems_);
}

}  // namespace attnsim::config
