// Writes results files in the schema of docs/hdf5-schema.md (HDF5 C++ API): provenance
// attributes, /config, /table/<column>, /points/<i>/... Whole-file writes only; no appends.
#pragma once

#include <string>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/io/point_record.h"
#include "sim/io/provenance.h"
#include "sim/io/results_table.h"

namespace attnsim::io {

// Every writer here writes to "<path>.tmp-<pid>" and renames it to `path` when the file is
// complete; on failure the temporary is removed, `path` is left untouched, and core::SimError
// is thrown naming the file. Datasets depend only on the arguments (never on time or -j).

// A sweep (or any set of points): `points` in ascending index order. `config_yaml` goes to
// /config. `complete` is written as the root attribute "complete" (0 for an interim snapshot
// of an unfinished sweep, 1 when every point is present).
void write_results_h5(const std::string& path, const std::vector<PointRecord>& points,
                      const Provenance& provenance, const std::string& config_yaml, bool complete = true);

// `attnsim run --out`: a one-row table (every resolved workload key, "device", every metric)
// and /points/0 with the run's kernels, tensors and series.
void write_run_h5(const std::string& path, const core::RunResult& result, const core::DeviceSpec& device,
                  const Provenance& provenance);

// A generic table with no per-point groups (e.g. `attnsim formulas --out`): /table/<column>
// for each of `columns` (equal lengths required), /config = `config_yaml`.
void write_table_h5(const std::string& path, const std::vector<Column>& columns, const Provenance& provenance,
                    const std::string& config_yaml = "");

// The PointRecord of a single run (what write_run_h5 stores as point 0).
PointRecord run_point_record(const core::RunResult& result, const core::DeviceSpec& device);

}  // namespace attnsim::io
