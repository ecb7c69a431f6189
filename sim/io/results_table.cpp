#include "sim/io/results_table.h"

#include <algorithm>
#include <limits>
#include <map>

namespace attnsim::io {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void add_name(std::vector<std::string>& order, std::map<std::string, bool>& seen, const std::string& n) {
  if (seen.emplace(n, true).second) order.push_back(n);
}

}  // namespace

std::vector<Column> table_columns(const std::vector<PointRecord>& points) {
  std::vector<Column> cols;
  Column idx{"point_index", {}}, status{"status", {}}, reason{"reason", {}};
  std::vector<std::string> params, metrics;
  std::map<std::string, bool> seen_params, seen_metrics;
  for (const auto& p : points) {
    idx.cells.emplace_back(static_cast<std::int64_t>(p.index));
    status.cells.emplace_back(p.status);
    reason.cells.emplace_back(p.reason);
    for (const auto& f : p.params) add_name(params, seen_params, f.name);
    if (p.result)
      for (const auto& m : p.result->metrics) add_name(metrics, seen_metrics, m.name);
  }
  cols.push_back(std::move(idx));
  cols.push_back(std::move(status));
  cols.push_back(std::move(reason));
  for (const auto& name : params) {
    if (name == "point_index" || name == "status" || name == "reason") continue;
    Column c{name, {}};
    std::vector<bool> missing;
    for (const auto& p : points) {
      auto it = std::find_if(p.params.begin(), p.params.end(), [&](const Field& f) { return f.name == name; });
      missing.push_back(it == p.params.end());
      c.cells.push_back(it == p.params.end() ? Cell{kNaN} : it->value);
    }
    // Fill holes with the column type's empty value.
    Column present{name, {}};
    for (std::size_t i = 0; i < c.cells.size(); ++i)
      if (!missing[i]) present.cells.push_back(c.cells[i]);
    const ColumnType t = column_type(present);
    for (std::size_t i = 0; i < c.cells.size(); ++i) {
      if (!missing[i]) continue;
      if (t == ColumnType::kString) c.cells[i] = std::string();
      else if (t == ColumnType::kBool) c.cells[i] = false;
      else c.cells[i] = kNaN;
    }
    cols.push_back(std::move(c));
  }
  for (const auto& name : metrics) {
    if (seen_params.count(name)) continue;
    Column c{name, {}};
    for (const auto& p : points) {
      const core::Metric* m = p.result ? core::find_metric(p.result->metrics, name) : nullptr;
      c.cells.emplace_back(m ? m->value : kNaN);
    }
    cols.push_back(std::move(c));
  }
  return cols;
}

ColumnType column_type(const Column& c) {
  if (c.cells.empty()) return ColumnType::kFloat64;
  bool all_int = true, all_num = true, all_bool = true;
  for (const auto& v : c.cells) {
    all_int = all_int && std::holds_alternative<std::int64_t>(v);
    all_num = all_num && (std::holds_alternative<std::int64_t>(v) || std::holds_alternative<double>(v));
    all_bool = all_bool && std::holds_alternative<bool>(v);
  }
  if (all_int) return ColumnType::kInt64;
  if (all_num) return ColumnType::kFloat64;
  if (all_bool) return ColumnType::kBool;
  return ColumnType::kString;
}

}  // namespace attnsim::io
