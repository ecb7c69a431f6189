#include "sim/config/map_reader.h"

#include <algorithm>
#include <limits>

namespace attnsim::config {

MapReader::MapReader(YamlReader& reader, const YAML::Node& node, std::string path)
    : reader_(reader), node_(node), path_(std::move(path)) {
  if (!node.IsDefined()) return;
  if (!node.IsMap()) {
    reader_.problem(node, path_.empty() ? "(top level)" : path_, "expected a mapping of keys, got " + YamlReader::node_kind(node));
    return;
  }
  valid_ = true;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    bool duplicate = false;
    for (const auto& e : entries_) duplicate = duplicate || e.key == key;
    if (duplicate) {
      reader_.problem(it->first, path_of(key), "key given twice");
      continue;
    }
    entries_.push_back({key, it->first, it->second, false});
  }
}

std::string MapReader::path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

MapReader::Entry* MapReader::find(const std::string& key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  for (auto& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

bool MapReader::has(const std::string& key) { return find(key) != nullptr; }

YAML::Node MapReader::get(const std::string& key) {
  Entry* e = find(key);
  if (!e) return YAML::Node(YAML::NodeType::Undefined);
  e->read = true;
  return e->value;
}

YAML::Node MapReader::child(const std::string& key, Need need) {
  YAML::Node v = get(key);
  if (!v.IsDefined() && need == Need::kRequired && valid_)
    reader_.problem(node_, path_of(key), "missing required key");
  return v;
}

bool MapReader::u64(const std::string& key, std::uint64_t& out, Need need, const std::string& expected) {
  const YAML::Node v = child(key, need);
  if (!v.IsDefined()) return false;
  const auto x = reader_.as_u64(v, path_of(key), expected);
  if (x) out = *x;
  return x.has_value();
}

bool MapReader::u32(const std::string& key, std::uint32_t& out, Need need, const std::string& expected) {
  std::uint64_t wide = out;
  if (!u64(key, wide, need, expected)) return false;
  if (wide > std::numeric_limits<std::uint32_t>::max()) {
    require(false, key, "must be at most " + std::to_string(std::numeric_limits<std::uint32_t>::max()));
    return false;
  }
  out = static_cast<std::uint32_t>(wide);
  return true;
}

bool MapReader::bytes(const std::string& key, std::uint64_t& out, Need need) {
  const YAML::Node v = child(key, need);
  if (!v.IsDefined()) return false;
  const auto x = reader_.as_bytes(v, path_of(key));
  if (x) out = *x;
  return x.has_value();
}

bool MapReader::number(const std::string& key, double& out, Need need) {
  const YAML::Node v = child(key, need);
  if (!v.IsDefined()) return false;
  const auto x = reader_.as_double(v, path_of(key));
  if (x) out = *x;
  return x.has_value();
}

bool MapReader::boolean(const std::string& key, bool& out, Need need) {
  const YAML::Node v = child(key, need);
  if (!v.IsDefined()) return false;
  const auto x = reader_.as_bool(v, path_of(key));
  if (x) out = *x;
  return x.has_value();
}

bool MapReader::string(const std::string& key, std::string& out, Need need) {
  const YAML::Node v = child(key, need);
  if (!v.IsDefined()) return false;
  const auto x = reader_.as_string(v, path_of(key));
  if (x) out = *x;
  return x.has_value();
}

void MapReader::require(bool ok, const std::string& key, const std::string& message) {
  record(ok, key, message, ProblemKind::kValue);
}

void MapReader::check(bool ok, const std::string& key, const std::string& message) {
  record(ok, key, message, ProblemKind::kCombination);
}

void MapReader::record(bool ok, const std::string& key, const std::string& message, ProblemKind kind) {
  if (ok) return;
  const Entry* e = nullptr;
  for (const auto& x : entries_)
    if (x.key == key) e = &x;
  reader_.problem(e ? e->value : node_, path_of(key), message, kind);
}

void MapReader::finish() {
  if (!valid_) return;
  for (const auto& e : entries_) {
    if (e.read) continue;
    // Keys that were looked up but not consumed are still known (asked for, then ignored).
    if (std::find(known_.begin(), known_.end(), e.key) != known_.end()) continue;
    std::string message = "unknown key";
    const std::string near = closest_match(e.key, known_);
    if (!near.empty()) message += " (did you mean '" + near + "'?)";
    reader_.problem(e.key_node, path_of(e.key), message);
  }
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    // A key missing its unit suffix ("capacity" for "capacity_bytes") or carrying an extra one.
    const bool prefix = std::min(word.size(), c.size()) >= 4 &&
                        (c.rfind(word, 0) == 0 || word.rfind(c, 0) == 0);
    if (prefix) d = std::min<std::size_t>(d, 1);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  const std::size_t allowed = std::max<std::size_t>(2, word.size() / 3);
  return best_d <= allowed ? best : std::string();
}

}  // namespace attnsim::config
