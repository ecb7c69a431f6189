// The one-row-per-point table of a results file: point_index, status, reason, every swept
// parameter, every total metric (Nsight Compute names). Columns are equal-length; no I/O here.
#pragma once

#include <string>
#include <vector>

#include "sim/io/cell.h"
#include "sim/io/point_record.h"

namespace attnsim::io {

struct Column {
  std::string name;
  std::vector<Cell> cells;  // one per row
};

// Rows in the order given (callers sort by point index). Parameter columns in first-seen order,
// then metric columns (row_metrics) in first-seen order; a metric a row lacks (impossible/error
// rows) is NaN. A parameter a row lacks is NaN / "" / false by the column's type. When any row
// has a result, three text columns end the table: attnsim__bound (the run's), and the longest
// launch's attnsim__occupancy_limiter and name (attnsim__longest_launch); "" in other rows.
std::vector<Column> table_columns(const std::vector<PointRecord>& points);

// The launch with the largest gpu__time_duration.sum (the first on ties); null without launches.
const core::KernelResult* longest_launch(const core::RunResult& r);
// A row's metric values: the run's totals, with the longest launch's launch__* metrics,
// sm__maximum_warps_per_active_cycle_pct and sm__warps_active.avg.pct_of_peak_sustained_active
// (theoretical and achieved occupancy) in place of the totals' time-weighted means.
core::Metrics row_metrics(const core::RunResult& r);

// The single type a column is stored as: int64 if every cell is an integer, float64 if every
// cell is a number, bool if every cell is a bool, else string (cells formatted as text).
enum class ColumnType { kInt64, kFloat64, kBool, kString };
ColumnType column_type(const Column& c);

}  // namespace attnsim::io
