// One YAML mapping read strictly: typed fields by name, "missing required key" for absent
// required ones, and at finish() every key never asked for reported as unknown (with the
// closest known key suggested). Range and cross-field rules belong to the caller.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/yaml_reader.h"

namespace attnsim::config {

enum class Need : std::uint8_t { kOptional, kRequired };

class MapReader {
 public:
  // `path` is the mapping's own dotted key path ("" at the root). An undefined `node` is an
  // absent section (nothing is read, nothing reported); a non-mapping node is a problem.
  MapReader(YamlReader& reader, const YAML::Node& node, std::string path);

  bool valid() const { return valid_; }
  bool has(const std::string& key);
  std::string path_of(const std::string& key) const;
  // The value under `key` (undefined when absent), marked as read.
  YAML::Node get(const std::string& key);
  // The value under `key`; records "missing required key" when absent and required.
  YAML::Node child(const std::string& key, Need need);

  // Each leaves `out` unchanged when the key is absent or its value is bad; returns true
  // only when a value was present and parsed.
  // `expected` names the allowed values in messages ("a positive integer").
  bool u64(const std::string& key, std::uint64_t& out, Need need = Need::kOptional,
           const std::string& expected = "a non-negative integer");
  bool u32(const std::string& key, std::uint32_t& out, Need need = Need::kOptional,
           const std::string& expected = "a non-negative integer");
  bool bytes(const std::string& key, std::uint64_t& out, Need need = Need::kOptional);
  bool number(const std::string& key, double& out, Need need = Need::kOptional);
  bool boolean(const std::string& key, bool& out, Need need = Need::kOptional);
  bool string(const std::string& key, std::string& out, Need need = Need::kOptional);

  // Records `message` at `key` (its line, or the mapping's) when `ok` is false: `require` for a
  // rule on the key's own value (a range, a choice; ProblemKind::kValue), `check` for a rule
  // across keys (ProblemKind::kCombination).
  void require(bool ok, const std::string& key, const std::string& message);
  void check(bool ok, const std::string& key, const std::string& message);

  // Reports every key present but never asked for.
  void finish();

  YamlReader& reader() { return reader_; }

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
    bool read = false;
  };
  Entry* find(const std::string& key);
  void record(bool ok, const std::string& key, const std::string& message, ProblemKind kind);

  YamlReader& reader_;
  YAML::Node node_;
  std::string path_;
  bool valid_ = false;
  std::vector<Entry> entries_;
  std::vector<std::string> known_;
};

// Levenshtein distance; used to suggest the closest known key or name.
std::size_t edit_distance(const std::string& a, const std::string& b);
// The candidate closest to `word`, or "" when none is close enough to be a likely typo.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace attnsim::config
