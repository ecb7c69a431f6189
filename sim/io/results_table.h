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
// then metric columns in first-seen order; a metric a row lacks (impossible/error rows) is NaN.
// A parameter a row lacks is NaN / "" / false by the column's type.
std::vector<Column> table_columns(const std::vector<PointRecord>& points);

// The single type a column is stored as: int64 if every cell is an integer, float64 if every
// cell is a number, bool if every cell is a bool, else string (cells formatted as text).
enum class ColumnType { kInt64, kFloat64, kBool, kString };
ColumnType column_type(const Column& c);

}  // namespace attnsim::io
