#include "sim/app/compare_report_writer.h"

#include <H5Cpp.h>

#include <cstdint>
#include <functional>

#include "attnsim/version.h"
#include "sim/core/errors.h"
#include "sim/io/h5_results_writer.h"
#include "sim/io/json_writer.h"

namespace attnsim::app {

namespace {

H5::StrType string_type() {
  H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
  t.setCset(H5T_CSET_UTF8);
  return t;
}

void write_strings(H5::Group& g, const std::string& name, const std::vector<std::string>& values) {
  const H5::StrType t = string_type();
  const hsize_t n = values.size();
  H5::DataSet d = g.createDataSet(name, t, H5::DataSpace(1, &n));
  std::vector<const char*> ptrs;
  for (const auto& s : values) ptrs.push_back(s.c_str());
  if (n) d.write(ptrs.data(), t);
}

void write_doubles(H5::Group& g, const std::string& name, const std::vector<double>& values) {
  const hsize_t n = values.size();
  H5::DataSet d = g.createDataSet(name, H5::PredType::IEEE_F64LE, H5::DataSpace(1, &n));
  if (n) d.write(values.data(), H5::PredType::NATIVE_DOUBLE);
}

void write_ints(H5::Group& g, const std::string& name, const std::vector<std::int64_t>& values) {
  const hsize_t n = values.size();
  H5::DataSet d = g.createDataSet(name, H5::PredType::STD_I64LE, H5::DataSpace(1, &n));
  if (n) d.write(values.data(), H5::PredType::NATIVE_INT64);
}

void set_attr(H5::H5Object& obj, const std::string& name, const std::string& value) {
  const H5::StrType t = string_type();
  H5::Attribute a = obj.createAttribute(name, t, H5::DataSpace(H5S_SCALAR));
  a.write(t, value);
}

void set_attr(H5::H5Object& obj, const std::string& name, double value) {
  H5::Attribute a = obj.createAttribute(name, H5::PredType::IEEE_F64LE, H5::DataSpace(H5S_SCALAR));
  a.write(H5::PredType::NATIVE_DOUBLE, &value);
}

template <typename T, typename F>
std::vector<T> column(const std::vector<MetricComparison>& rows, F get) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (const auto& r : rows) out.push_back(static_cast<T>(get(r)));
  return out;
}

template <typename T, typename F>
std::vector<T> summary_column(const std::vector<MetricSummary>& rows, F get) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (const auto& r : rows) out.push_back(static_cast<T>(get(r)));
  return out;
}

}  // namespace

void CompareReportWriter::write_json(const CompareReport& report, const CompareSources& sources,
                                     std::ostream& out) {
  io::JsonWriter j(out);
  j.begin_object();
  j.key("measured_file");
  j.value(sources.measured_file);
  j.key("simulated_file");
  j.value(sources.simulated_file);
  j.key("rows");
  j.begin_array();
  for (const auto& r : report.rows()) {
    j.begin_object();
    j.key("label");
    j.value(r.label);
    j.key("kernel_index");
    j.value(r.kernel_index);
    j.key("measured_kernel");
    j.value(r.measured_kernel);
    j.key("simulated_kernel");
    j.value(r.simulated_kernel);
    j.key("point");
    j.value(r.point);
    j.key("metric");
    j.value(r.metric);
    j.key("measured");
    j.value(r.measured);
    j.key("simulated");
    j.value(r.simulated);
    j.key("abs_error");
    j.value(r.abs_error);
    j.key("rel_error");
    j.value(r.rel_error);
    j.end_object();
  }
  j.end_array();
  j.key("summary");
  j.begin_array();
  for (const auto& s : report.summary()) {
    j.begin_object();
    j.key("metric");
    j.value(s.metric);
    j.key("count");
    j.value(static_cast<std::uint64_t>(s.count));
    j.key("median_rel_error");
    j.value(s.median_rel_error);
    j.key("worst_rel_error");
    j.value(s.worst_rel_error);
    j.key("worst_at");
    j.value(s.worst_where);
    j.key("target");
    if (s.target < 0) {
      j.null();
    } else {
      j.value(s.target);
    }
    j.key("target_met");
    j.value(s.target_met);
    j.end_object();
  }
  j.end_array();
  j.key("time_rank_correlation");
  j.value(report.time_rank_correlation());
  j.key("unmatched");
  j.begin_array();
  for (const auto& u : sources.unmatched) j.value(u);
  j.end_array();
  j.end_object();
  j.finish();
}

void CompareReportWriter::write_h5(const CompareReport& report, const CompareSources& sources,
                                   const std::string& path) {
  io::write_h5_atomically(path, [&](H5::H5File& f) {
    H5::Group root = f.openGroup("/");
    set_attr(root, "measured_file", sources.measured_file);
    set_attr(root, "simulated_file", sources.simulated_file);
    set_attr(root, "command_line", sources.command_line);
    set_attr(root, "attnsim_version", std::string(kVersion) + " (" + kGitRevision + ")");
    set_attr(root, "time_rank_correlation", report.time_rank_correlation());
    const auto& rows = report.rows();
    H5::Group c = root.createGroup("comparison");
    write_strings(c, "label", column<std::string>(rows, [](const auto& r) { return r.label; }));
    write_ints(c, "kernel_index", column<std::int64_t>(rows, [](const auto& r) { return r.kernel_index; }));
    write_strings(c, "measured_kernel", column<std::string>(rows, [](const auto& r) { return r.measured_kernel; }));
    write_strings(c, "simulated_kernel",
                  column<std::string>(rows, [](const auto& r) { return r.simulated_kernel; }));
    write_ints(c, "point", column<std::int64_t>(rows, [](const auto& r) { return r.point; }));
    write_strings(c, "metric", column<std::string>(rows, [](const auto& r) { return r.metric; }));
    write_doubles(c, "measured", column<double>(rows, [](const auto& r) { return r.measured; }));
    write_doubles(c, "simulated", column<double>(rows, [](const auto& r) { return r.simulated; }));
    write_doubles(c, "abs_error", column<double>(rows, [](const auto& r) { return r.abs_error; }));
    write_doubles(c, "rel_error", column<double>(rows, [](const auto& r) { return r.rel_error; }));
    const auto& sum = report.summary();
    H5::Group s = root.createGroup("summary");
    write_strings(s, "metric", summary_column<std::string>(sum, [](const auto& r) { return r.metric; }));
    write_ints(s, "count", summary_column<std::int64_t>(sum, [](const auto& r) { return r.count; }));
    write_doubles(s, "median_rel_error",
                  summary_column<double>(sum, [](const auto& r) { return r.median_rel_error; }));
    write_doubles(s, "worst_rel_error",
                  summary_column<double>(sum, [](const auto& r) { return r.worst_rel_error; }));
    write_strings(s, "worst_at", summary_column<std::string>(sum, [](const auto& r) { return r.worst_where; }));
    write_doubles(s, "target", summary_column<double>(sum, [](const auto& r) { return r.target; }));
    write_ints(s, "target_met", summary_column<std::int64_t>(sum, [](const auto& r) { return r.target_met; }));
    write_strings(root, "unmatched", sources.unmatched);
  });
}

}  // namespace attnsim::app
