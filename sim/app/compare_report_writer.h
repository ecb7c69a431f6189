// Writes a CompareReport as JSON (--json) or HDF5 (--out): every comparison row, the per-metric
// summary, the time-ranking correlation and the unmatched kernels. No reading back.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/app/compare_report.h"

namespace attnsim::app {

struct CompareSources {
  std::string measured_file;
  std::string simulated_file;
  std::string command_line;
  std::vector<std::string> unmatched;  // one line per unmatched measured kernel
};

class CompareReportWriter {
 public:
  // {"measured_file", "simulated_file", "rows": [{label, kernel_index, measured_kernel,
  //  simulated_kernel, point, metric, measured, simulated, abs_error, rel_error}],
  //  "summary": [{metric, count, median_rel_error, worst_rel_error, worst_at, target, target_met}],
  //  "time_rank_correlation", "unmatched": [..]}; NaN prints as null.
  static void write_json(const CompareReport& report, const CompareSources& sources, std::ostream& out);

  // /comparison/<column> and /summary/<column>: 1-D datasets, one element per row (strings are
  // variable-length UTF-8); root attributes measured_file, simulated_file, command_line,
  // attnsim_version, time_rank_correlation; /unmatched string list. Written to a temporary
  // name and renamed (io::write_h5_atomically); throws io::OutputError when the file system refuses
  // it (a full disk: exit 2), core::SimError when HDF5 fails.
  static void write_h5(const CompareReport& report, const CompareSources& sources, const std::string& path);
};

}  // namespace attnsim::app
