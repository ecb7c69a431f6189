#include "sim/io/h5_results_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>

#include "sim/core/errors.h"
#include "sim/io/durable_write.h"
#include "sim/io/output_target.h"
#include "sim/io/h5_file_builder.h"
#include "sim/io/workload_fields.h"

namespace attnsim::io {

namespace {

using B = H5FileBuilder;

const std::vector<std::string> kTensorColumns = {"dram_read", "dram_write", "lts_read",  "lts_write",
                                                 "l1_read",   "l1_write",   "smem_read", "smem_write"};

void write_provenance(H5::H5File& f, const Provenance& p, bool complete) {
  H5::Group root = f.openGroup("/");
  B::set_attr(root, "attnsim_version", p.attnsim_version);
  B::set_attr(root, "git_revision", p.git_revision);
  B::set_attr(root, "command_line", p.command_line);
  B::set_attr(root, "created_by", p.created_by);
  B::set_attr(root, "schema_version", kSchemaVersion);
  B::set_attr(root, "complete", static_cast<std::int64_t>(complete ? 1 : 0));
  if (!p.sweep_text.empty() || !p.sweep_hash.empty()) {
    B::set_attr(root, "sweep_file_text", p.sweep_text);
    B::set_attr(root, "sweep_hash", p.sweep_hash);
  }
  if (!p.shard.empty()) B::set_attr(root, "shard", p.shard);
}

struct MetricRow {
  const char* name;
  double value;
};

void write_metrics(H5::Group& g, const core::Metrics& metrics) {
  const H5::StrType st = B::string_type();
  H5::CompType t(sizeof(MetricRow));
  t.insertMember("name", HOFFSET(MetricRow, name), st);
  t.insertMember("value", HOFFSET(MetricRow, value), H5::PredType::NATIVE_DOUBLE);
  std::vector<MetricRow> rows;
  for (const auto& m : metrics) rows.push_back({m.name.c_str(), m.value});
  const hsize_t n = rows.size();
  H5::DataSet d = g.createDataSet("metrics", t, H5::DataSpace(1, &n));
  if (n) d.write(rows.data(), t);
}

void write_tensors(H5::Group& parent, const core::LevelTraffic& t) {
  H5::Group g = B::ordered_group(parent, "tensors");
  std::vector<std::string> names;
  std::vector<std::uint64_t> bytes;
  for (std::size_t i = 0; i < core::kNumTensors; ++i) {
    const auto x = static_cast<core::Tensor>(i);
    const core::TensorBytes z{};
    if (t.dram[x] == z && t.lts[x] == z && t.l1[x] == z && t.smem[x] == z) continue;
    names.emplace_back(core::to_string(x));
    for (const core::TensorTraffic* level : {&t.dram, &t.lts, &t.l1, &t.smem}) {
      bytes.push_back((*level)[x].read);
      bytes.push_back((*level)[x].write);
    }
  }
  B::write_strings(g, "names", names);
  B::write_strings(g, "columns", kTensorColumns);
  B::write_uint64_matrix(g, "bytes", bytes, names.size(), kTensorColumns.size());
}

void write_series(H5::Group& parent, const core::TimeSeries& s) {
  H5::Group g = B::ordered_group(parent, "series");
  B::set_attr_double(g, "period_ns", s.period_ns);
  for (std::size_t c = 0; c < s.names.size(); ++c)
    B::write_doubles(g, s.names[c], c < s.columns.size() ? s.columns[c] : std::vector<double>{});
}

void write_point(H5::Group& points, const PointRecord& p) {
  H5::Group g = B::ordered_group(points, std::to_string(p.index));
  B::set_attr(g, "status", p.status);
  B::set_attr(g, "reason", p.reason);
  B::write_string(g, "config", p.config_yaml);
  B::write_string(g, "record", serialize_point(p));
  if (!p.result) return;
  const core::RunResult& r = *p.result;
  write_metrics(g, r.metrics);
  write_tensors(g, r.tensors);
  H5::Group kernels = B::ordered_group(g, "kernels");
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    const auto& k = r.kernels[i];
    std::string name = std::to_string(i) + "_" + k.name;
    for (auto& c : name)
      if (c == '/' || c == '.') c = '_';
    H5::Group kg = B::ordered_group(kernels, name);
    B::set_attr(kg, "name", k.name);
    write_metrics(kg, k.metrics);
    write_tensors(kg, k.tensors);
    write_series(kg, k.series);
  }
  write_series(g, joined_series(r));
}

void write_table(H5::H5File& f, const std::vector<Column>& columns) {
  H5::Group root = f.openGroup("/");
  H5::Group t = B::ordered_group(root, "table");
  std::size_t rows = columns.empty() ? 0 : columns[0].cells.size();
  for (const auto& c : columns) {
    if (c.cells.size() != rows) throw core::SimError("table column '" + c.name + "' has a different length");
    B::write_column(t, c);
  }
}

}  // namespace

// The run's series over all kernels, back to back: each kernel's time_ns is shifted by the
// gpu__time_duration.sum of the kernels before it; a column a kernel lacks is NaN there.
core::TimeSeries joined_series(const core::RunResult& r) {
  core::TimeSeries out;
  if (r.kernels.size() == 1) return r.kernels[0].series;
  for (const auto& k : r.kernels) {
    for (const auto& n : k.series.names)
      if (std::find(out.names.begin(), out.names.end(), n) == out.names.end()) out.names.push_back(n);
    if (out.period_ns == 0) out.period_ns = k.series.period_ns;
  }
  out.columns.resize(out.names.size());
  double offset = 0;
  for (const auto& k : r.kernels) {
    const std::size_t samples = k.series.columns.empty() ? 0 : k.series.columns[0].size();
    for (std::size_t c = 0; c < out.names.size(); ++c) {
      auto it = std::find(k.series.names.begin(), k.series.names.end(), out.names[c]);
      const std::size_t src = static_cast<std::size_t>(it - k.series.names.begin());
      for (std::size_t i = 0; i < samples; ++i) {
        double v = std::numeric_limits<double>::quiet_NaN();
        if (it != k.series.names.end() && src < k.series.columns.size() && i < k.series.columns[src].size())
          v = k.series.columns[src][i] + (out.names[c] == "time_ns" ? offset : 0.0);
        out.columns[c].push_back(v);
      }
    }
    const core::Metric* t = core::find_metric(k.metrics, "gpu__time_duration.sum");
    offset += t ? t->value : 0.0;
  }
  return out;
}

void write_results_h5(const std::string& path, const std::vector<PointRecord>& points,
                      const Provenance& provenance, const std::string& config_yaml, bool complete) {
  write_h5_atomically(path, [&](H5::H5File& f) {
    write_provenance(f, provenance, complete);
    H5::Group root = f.openGroup("/");
    B::write_string(root, "config", config_yaml);
    write_table(f, table_columns(points));
    H5::Group pg = B::ordered_group(root, "points");
    for (const auto& p : points) write_point(pg, p);
  });
}

// Builds the file in memory (HDF5's core driver, no backing store: the name given to HDF5 is never
// created), then hands its image to write_output (sim/io/output_target.h): a regular file is
// replaced through a temporary beside it, fsync'ed and renamed; a device or FIFO receives the
// bytes once. HDF5 itself never touches the disk: a full disk or another write failure surfaces
// as an OutputError with the system's reason, the temporary is removed and `path` stays as it
// was. (HDF5 1.10 fails to close a file whose final flush failed and crashes on the next close;
// with sec2 a full disk did that.)
void write_h5_atomically(const std::string& path, const std::function<void(H5::H5File&)>& fill) {
  const std::string in_memory = path + ".in-memory-" + std::to_string(::getpid());
  std::vector<unsigned char> image;
  try {
    H5::Exception::dontPrint();
    H5::FileAccPropList fapl;
    fapl.setCore(std::size_t{4} << 20, false);  // grows in 4 MiB steps
    H5::H5File f(in_memory, H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT, fapl);
    fill(f);
    f.flush(H5F_SCOPE_LOCAL);
    const ssize_t size = H5Fget_file_image(f.getId(), nullptr, 0);
    if (size < 0) throw H5::FileIException("H5Fget_file_image", "cannot get the size of the file image");
    image.resize(static_cast<std::size_t>(size));
    if (H5Fget_file_image(f.getId(), image.data(), image.size()) != size)
      throw H5::FileIException("H5Fget_file_image", "cannot copy the file image");
    f.close();
  } catch (const H5::Exception& e) {
    throw core::SimError("cannot write " + path + ": " + e.getFuncName() + ": " + e.getDetailMsg());
  }
  write_output(path, image.data(), image.size());
}

PointRecord run_point_record(const core::RunResult& result, const core::DeviceSpec& device,
                             const std::string& config_yaml) {
  PointRecord p;
  p.index = 0;
  p.params = workload_fields(result.workload);
  p.params.push_back({"device", device.name});
  p.config_yaml = config_yaml;
  p.result = result;
  p.result->wall_seconds = 0;  // host time is not part of the results: same input, same datasets
  return p;
}

void write_run_h5(const std::string& path, const core::RunResult& result, const core::DeviceSpec& device,
                  const Provenance& provenance, const std::string& config_yaml) {
  const PointRecord p = run_point_record(result, device, config_yaml);
  write_results_h5(path, {p}, provenance, p.config_yaml, true);
}

void write_table_h5(const std::string& path, const std::vector<Column>& columns, const Provenance& provenance,
                    const std::string& config_yaml) {
  write_h5_atomically(path, [&](H5::H5File& f) {
    write_provenance(f, provenance, true);
    H5::Group root = f.openGroup("/");
    B::write_string(root, "config", config_yaml);
    write_table(f, columns);
  });
}

}  // namespace attnsim::io
