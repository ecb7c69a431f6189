// Writes results files in the schema of docs/hdf5-schema.md (HDF5 C++ API): provenance
// attributes, /config, /table/<column>, /points/<i>/... Whole-file writes only; no appends.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/io/point_record.h"
#include "sim/io/provenance.h"
#include "sim/io/results_table.h"

namespace H5 {
class H5File;
}

namespace attnsim::io {

// Every writer here builds the file in memory and writes it by the output-path policy
// (sim/io/output_target.h, docs/output-paths.md): a regular file goes to "<target>.tmp-<pid>"
// beside it, is fsync'ed and renamed onto it; a device or FIFO receives the bytes once; a
// directory, socket or block device is refused. On failure the temporary is removed and `path`
// is left untouched. A file
// system failure (full disk, quota, ...) throws io::OutputError (a ConfigError: exit 2) naming
// `path` and the reason, an HDF5 failure core::SimError. Datasets depend only on the arguments
// (never on time or -j).

// The way every writer here writes: `fill` builds the file (in memory), which is then written as
// described above. Also used by other HDF5 outputs (`attnsim compare --out`).
void write_h5_atomically(const std::string& path, const std::function<void(H5::H5File&)>& fill);

// A sweep (or any set of points): `points` in ascending index order. `config_yaml` goes to
// /config. `complete` is written as the root attribute "complete" (0 for an interim snapshot
// of an unfinished sweep, 1 when every point is present).
void write_results_h5(const std::string& path, const std::vector<PointRecord>& points,
                      const Provenance& provenance, const std::string& config_yaml, bool complete = true);

// `attnsim run --out`: a one-row table (every resolved workload key, "device", every metric)
// and /points/0 with the run's kernels, tensors and series.
// `config_yaml`: the point's config (config::point_config_yaml), also the file's /config.
void write_run_h5(const std::string& path, const core::RunResult& result, const core::DeviceSpec& device,
                  const Provenance& provenance, const std::string& config_yaml);

// A generic table with no per-point groups (e.g. `attnsim formulas --out`): /table/<column>
// for each of `columns` (equal lengths required), /config = `config_yaml`.
void write_table_h5(const std::string& path, const std::vector<Column>& columns, const Provenance& provenance,
                    const std::string& config_yaml = "");

// The run's series over all kernels, back to back (/points/<i>/series): each kernel's time_ns is
// shifted by the gpu__time_duration.sum of the kernels before it; a missing column is NaN there.
core::TimeSeries joined_series(const core::RunResult& result);

// The PointRecord of a single run (what write_run_h5 stores as point 0).
PointRecord run_point_record(const core::RunResult& result, const core::DeviceSpec& device,
                             const std::string& config_yaml);

}  // namespace attnsim::io
