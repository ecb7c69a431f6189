// Strict YAML reading for one input file: typed scalar parsing, and every problem collected
// with its file, 1-based line and dotted key path, thrown together as one core::ConfigError.
// It knows nothing of devices or workloads (see MapReader, DeviceLoader); no schema language.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "sim/core/errors.h"

namespace attnsim::config {

// What a problem is about: a value wrong in itself (type, range, unknown choice or key), bad
// wherever it appears, or a combination of values each valid alone (heads % kv_heads, a cache
// size that is not a multiple of its sets), which a sweep may record as an impossible point.
enum class ProblemKind : std::uint8_t { kValue, kCombination };

// Where an overridden value was written: a `--set` flag (file empty: "--set <key>"), or a line
// of a file (a sweep's `set:` entry or axis value, label "set.seq" or "axes.block_n[1]").
struct ValueOrigin {
  std::string file;
  int line = 0;
  std::string label;
};

class YamlReader {
 public:
  // `file` names the input in messages; `set_prefix` is prepended to overridden key paths
  // ("device." for device overrides, whose prefix the caller stripped).
  explicit YamlReader(std::string file, std::string set_prefix = "");

  // Marks `key_path` as overridden: its problems (and those below it) are located at `origin`,
  // by default "--set <key>".
  void mark_overridden(const std::string& key_path, const ValueOrigin& origin = {});
  bool overridden(const std::string& key_path) const;

  // Prepended to the key path of every problem not located at an override ("base." when a
  // sweep's base mapping is read as a workload).
  void set_key_prefix(std::string prefix) { key_prefix_ = std::move(prefix); }

  // Records a problem located at `node` (its line) unless the key was overridden.
  void problem(const YAML::Node& node, const std::string& key_path, const std::string& message,
               ProblemKind kind = ProblemKind::kValue);
  void problem_at_line(int line, const std::string& key_path, const std::string& message,
                       ProblemKind kind = ProblemKind::kValue);

  // Records a problem found by another reader, as it is.
  void add(const core::ConfigProblem& p, ProblemKind kind = ProblemKind::kValue);

  // Typed scalars; each returns nullopt after recording a problem. `expected` names the
  // allowed values in the message ("a positive integer").
  std::optional<std::uint64_t> as_u64(const YAML::Node& node, const std::string& key_path,
                                      const std::string& expected = "a non-negative integer");
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
  // The problems of kind kValue only.
  std::vector<core::ConfigProblem> value_problems() const;
  // Throws one ConfigError holding every recorded problem (no-op when there are none).
  void throw_if_problems() const;

  static int line_of(const YAML::Node& node);  // 1-based; 0 when unknown
  static std::string node_kind(const YAML::Node& node);  // "a mapping", "a list", ...

 private:
  std::string file_;
  std::string set_prefix_;
  std::string key_prefix_;
  std::map<std::string, ValueOrigin> overridden_;
  std::vector<core::ConfigProblem> problems_;
  std::vector<ProblemKind> kinds_;
};

}  // namespace attnsim::config
