// Measured vs simulated, metric by metric: one row per (matched kernel, metric both sides have)
// with absolute and relative error, a per-metric summary (median and worst |relative error|,
// accuracy targets of issue 6) and the time-ranking agreement (Spearman). No I/O but a text table.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/app/compare_matcher.h"
#include "sim/app/compare_simulated_reader.h"
#include "sim/io/ncu_csv_reader.h"

namespace attnsim::app {

struct MetricComparison {
  std::string label;             // measured workload label (or variant when unlabeled)
  std::uint64_t kernel_index = 0;
  std::string measured_kernel;   // kernel name as profiled
  std::string simulated_kernel;  // attnsim kernel name
  std::uint64_t point = 0;       // simulated point index
  std::string metric;
  double measured = 0;
  double simulated = 0;
  double abs_error = 0;          // simulated - measured, in the metric's unit
  double rel_error = 0;          // (simulated - measured) / |measured|; NaN when measured = 0 != simulated
};

struct MetricSummary {
  std::string metric;
  std::size_t count = 0;            // rows with a defined relative error
  double median_rel_error = 0;      // median of |rel_error|
  double worst_rel_error = 0;       // max of |rel_error|
  std::string worst_where;          // "label kernel k" of the worst row
  double target = -1;               // < 0: none; 0: exact for every kernel; else on the median
  bool target_met = true;
};

class CompareReport {
 public:
  CompareReport(const io::MeasuredTable& measured, const std::vector<SimulatedPoint>& simulated,
                const MatchResult& matches);

  const std::vector<MetricComparison>& rows() const { return rows_; }
  const std::vector<MetricSummary>& summary() const { return summary_; }
  // Spearman rank correlation of gpu__time_duration.sum over matched kernels; NaN if < 2.
  double time_rank_correlation() const { return time_rank_correlation_; }
  bool targets_met() const;

  void print(std::ostream& out) const;

  // Summary of one metric's rows (the rows' `metric` is not checked).
  static MetricSummary summarize(const std::string& metric, const std::vector<MetricComparison>& rows);
  static double median(std::vector<double> values);  // NaN when empty
  static double spearman(const std::vector<double>& a, const std::vector<double>& b);
  // Issue 6's accuracy target for `metric`: median |relative error| within DRAM bytes 10 %,
  // L2 bytes 20 %, time 20 %; occupancy limits and theoretical occupancy exact (0) for every
  // kernel; < 0 when none.
  static double target_for(const std::string& metric);
  // Display order: the contract's metrics first, then the rest alphabetically.
  static bool metric_before(const std::string& a, const std::string& b);

 private:
  std::vector<MetricComparison> rows_;
  std::vector<MetricSummary> summary_;
  double time_rank_correlation_ = 0;
};

}  // namespace attnsim::app
