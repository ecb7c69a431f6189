// `attnsim compare`: measured kernels (Nsight Compute CSV) against simulated ones (results HDF5):
// a per-metric error table and summary, --json, --out report.h5, --check against issue 6 targets.
#include "sim/app/cli_common.h"
#include "sim/app/output_path.h"
#include "sim/app/compare_matcher.h"
#include "sim/app/compare_report.h"
#include "sim/app/compare_report_writer.h"
#include "sim/app/compare_simulated_reader.h"
#include "sim/core/errors.h"
#include "sim/io/ncu_csv_reader.h"

namespace attnsim::app {

namespace {

std::string describe_unmatched(const io::MeasuredTable& measured, const UnmatchedKernel& u) {
  const io::MeasuredKernel& k = measured.kernels[u.measured];
  const std::string label = k.workload.label.empty() ? k.workload.variant : k.workload.label;
  return (label.empty() ? std::string() : label + " ") + "kernel " + std::to_string(k.kernel_index) + " '" +
         k.kernel_name + "': " + u.reason;
}

}  // namespace

int cmd_compare(const Args& args, std::ostream& out) {
  po::options_description desc("attnsim compare options");
  std::string measured_path, simulated_path, out_path, device;
  desc.add_options()
      ("measured", po::value(&measured_path)->required(),
       "Nsight Compute CSV (ncu --csv --page raw --print-units base, with workload columns joined in "
       "by scripts/measure_cuda.sh) or a file in the layout of tests/data/reference/kernels.csv")
      ("simulated", po::value(&simulated_path)->required(), "results HDF5 written by attnsim run/sweep --out")
      ("out", po::value(&out_path), "also write the comparison to this HDF5 file")
      ("json", po::bool_switch(), "print the comparison as one JSON object")
      ("device", po::value(&device), "only match simulated points run on this device preset")
      ("allow-unmatched", po::bool_switch(), "warn about measured kernels with no simulated match instead of failing")
      ("check", po::bool_switch(), "exit 1 when a metric misses its accuracy target (see docs/calibration.md)");
  po::variables_map vm;
  if (!parse_options(args,
                     "attnsim compare --measured FILE.csv --simulated FILE.h5 [--out report.h5] [--json] "
                     "[--device DEV] [--allow-unmatched] [--check]",
                     desc, vm, out))
    return 0;
  if (!out_path.empty()) check_output_path(out_path, "--out");

  const io::MeasuredTable measured = io::NcuCsvReader::read_file(measured_path);
  const std::vector<SimulatedPoint> simulated = CompareSimulatedReader::read(simulated_path);
  const MatchResult matches = CompareMatcher::match(measured, simulated, device);

  CompareSources sources{measured_path, simulated_path, "attnsim compare", {}};
  for (const auto& a : args) sources.command_line += " " + a;
  std::vector<core::ConfigProblem> problems;
  for (const auto& u : matches.unmatched) {
    sources.unmatched.push_back(describe_unmatched(measured, u));
    problems.push_back({measured_path, measured.kernels[u.measured].line, "", sources.unmatched.back()});
  }
  if (!problems.empty() && !vm["allow-unmatched"].as<bool>()) {
    problems.push_back({"", 0, "", std::to_string(problems.size()) + " of " +
                                       std::to_string(measured.kernels.size()) +
                                       " measured kernels have no simulated match (--allow-unmatched "
                                       "compares the rest)"});
    throw core::ConfigError(problems);
  }
  if (matches.matches.empty())
    throw core::ConfigError(core::ConfigProblem{measured_path, 0, "",
                                                "no measured kernel matches a simulated one in " + simulated_path});

  const CompareReport report(measured, simulated, matches);
  if (!out_path.empty()) CompareReportWriter::write_h5(report, sources, out_path);
  std::ostream& text = report_stream(out_path, out);
  if (vm["json"].as<bool>()) {
    CompareReportWriter::write_json(report, sources, text);
  } else {
    text << "attnsim compare: " << matches.matches.size() << " of " << measured.kernels.size()
        << " measured kernels matched (" << measured_path << " vs " << simulated_path << ")\n";
    for (const auto& u : sources.unmatched) text << "warning: unmatched: " << u << "\n";
    report.print(text);
    if (!out_path.empty()) text << "wrote " << out_path << "\n";
  }
  return vm["check"].as<bool>() && !report.targets_met() ? 1 : 0;
}

}  // namespace attnsim::app
