// Reads back what h5_results_writer.h writes: provenance, /config, /table columns and each
// point's exact record (/points/<i>/record). For merge, --resume and tests; no schema checks.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/io/point_record.h"
#include "sim/io/results_table.h"

namespace attnsim::io {

struct ResultsFile {
  std::map<std::string, std::string> string_attrs;  // root attributes that are strings
  bool complete = false;
  std::string config_yaml;
  std::vector<Column> table;          // in file (creation) order
  std::vector<PointRecord> points;    // ascending index
};

// Throws core::ConfigError ("FILE: not a readable attnsim results file: ...") when the file is
// missing, not HDF5, or lacks the schema's groups.
ResultsFile read_results_h5(const std::string& path);

}  // namespace attnsim::io
