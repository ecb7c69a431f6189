#include "sim/io/results_table.h"

#include <algorithm>
#include <limits>
#include <map>

#include "sim/core/derived_metrics.h"

namespace attnsim::io {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void add_name(std::vector<std::string>& order, std::map<std::string, bool>& seen, const std::string& n) {
  if (seen.emplace(n, true).second) order.push_back(n);
}

}  // namespace

const core::KernelResult* longest_launch(const core::RunResult& r) {
  const core::KernelResult* best = nullptr;
  double best_ns = 0;
  for (const auto& k : r.kernels) {
    const core::Metric* t = core::find_metric(k.metrics, "gpu__time_duration.sum");
    const double ns = t ? t->value : 0.0;
    if (!best || ns > best_ns) {
      best = &k;
      best_ns = ns;
    }
  }
  return best;
}

core::Metrics row_metrics(const core::RunResult& r) {
  core::Metrics m = r.metrics;
  if (const core::KernelResult* k = longest_launch(r))
    for (const auto& x : k->metrics)
      if (x.name.rfind("launch__", 0) == 0 || x.name == "sm__maximum_warps_per_active_cycle_pct" ||
          x.name == "sm__warps_active.avg.pct_of_peak_sustained_active")
        core::set_metric(m, x.name, x.value);
  return m;
}

std::vector<Column> table_columns(const std::vector<PointRecord>& points) {
  std::vector<Column> cols;
  Column idx{"point_index", {}}, status{"status", {}}, reason{"reason", {}};
  std::vector<std::string> params, metrics;
  std::map<std::string, bool> seen_params, seen_metrics;
  std::vector<core::Metrics> rows;  // row_metrics of each point (empty when it has no result)
  rows.reserve(points.size());
  bool any_result = false;
  for (const auto& p : points) {
    idx.cells.emplace_back(static_cast<std::int64_t>(p.index));
    status.cells.emplace_back(p.status);
    reason.cells.emplace_back(p.reason);
    for (const auto& f : p.params) add_name(params, seen_params, f.name);
    rows.push_back(p.result ? row_metrics(*p.result) : core::Metrics{});
    any_result = any_result || p.result.has_value();
    for (const auto& m : rows.back()) add_name(metrics, seen_metrics, m.name);
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
    for (const auto& row : rows) {
      const core::Metric* m = core::find_metric(row, name);
      c.cells.emplace_back(m ? m->value : kNaN);
    }
    cols.push_back(std::move(c));
  }
  if (any_result) {  // text-valued derived columns ("" in rows without a result)
    Column bound{"attnsim__bound", {}}, limiter{"attnsim__occupancy_limiter", {}},
        longest{"attnsim__longest_launch", {}};
    for (std::size_t i = 0; i < points.size(); ++i) {
      const core::KernelResult* k = points[i].result ? longest_launch(*points[i].result) : nullptr;
      bound.cells.emplace_back(points[i].result ? core::bound_of(points[i].result->metrics) : std::string());
      limiter.cells.emplace_back(k ? k->occupancy_limiter : std::string());
      longest.cells.emplace_back(k ? k->name : std::string());
    }
    cols.push_back(std::move(bound));
    cols.push_back(std::move(limiter));
    cols.push_back(std::move(longest));
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
