// Strict YAML reading for one input file: typed scalar parsing, and every problem collected
// with its file, 1-based line and dotted key path, thrown together as one core::ConfigError.
// It knows nothing of devices or workloads (see MapReader, DeviceLoader); no schema language.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/core/errors.h"

namespace attnsim::config {

class YamlReader {
 public:
  // `file` names the input in messages; `set_prefix` is prepended to overridden key paths
  // ("device." for device overrides, whose prefix the caller stripped).
  explicit YamlReader(std::string file, std::string set_prefix = "");

  // Marks `key_path` as set from the command line: its problems are located at "--set <key>".
  void mark_overridden(const std::string& key_path);
  bool overridden(const std::string& key_path) const;

  // Records a problem located at `node` (its line) unless the key came from --set.
  void problem(const YAML::Node& node, const std::string& key_path, const std::string& message);
  void problem_at_line(int line, const std::string& key_path, const std::string& message);

  // Typed scalars; each returns nullopt after recording a problem.
  std::optional<std::uint64_t> as_u64(const YAML::Node& node, const std::string& key_path);
  std::optional<std::int64_t> as_i64(const YAML::Node& node, const std::string& key_path);
  std::optional<double> as_double(const YAML::Node& node, const std::string& key_path);
  std::optional<bool> as_bool(const YAML::Node& node, const std::string& key_path);
  std::optional<std::string> as_string(const YAML::Node& node, const std::string& key_path);
  // A byte count: an integer, or a string "<number> <unit>" with unit B, KiB, MiB, GiB, TiB,
  // KB, MB, GB, TB ("60 MiB", "1.5 KiB" when that is a whole number of bytes).
  std::optional<std::uint64_t> as_bytes(const YAML::Node& node, const std::string& key_path);

  const std::string& file() const { return file_; }
  bool has_problems() const { return !problems_.empty(); }
  const std::vector<core::ConfigProblem>& problems() const { return problems_; }
  // Throws one ConfigError holding every recorded problem (no-op when there are none).
  void throw_if_problems() const;

  static int line_of(const YAML::Node& node);  // 1-based; 0 when unknown
  static std::string node_kind(const YAML::Node& node);  // "a mapping", "a list", ...

 private:
  std::string file_;
  std::string set_prefix_;
  std::set<std::string> overridden_;
  std::vector<core::ConfigProblem> problems_;
};

}  // namespace attnsim::config
