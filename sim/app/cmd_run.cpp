// `attnsim run`: one simulation of one workload on one device; a text report, --json, --out.
#include <unistd.h>

#include <iostream>

#include "kernels/registry.h"
#include "kernels/block_sizes.h"
#include "sim/app/cli_common.h"
#include "sim/app/command_context.h"
#include "sim/app/command_line.h"
#include "sim/app/output_path.h"
#include "sim/app/run_pipeline.h"
#include "sim/app/run_progress.h"
#include "sim/app/run_trace.h"
#include "sim/config/config.h"
#include "sim/core/errors.h"
#include "sim/io/h5_results_writer.h"
#include "sim/io/provenance.h"
#include "sim/io/run_json.h"
#include "sim/io/run_summary.h"

namespace attnsim::app {

int cmd_run(const Args& args, std::ostream& out) {
  po::options_description desc("attnsim run options");
  std::string device_name, workload_file, kernel, out_path, max_memory, trace_path, trace_ctas;
  std::vector<std::string> sets;
  std::string kernel_help = "kernel name instead of a workload file:";
  for (const std::string& name : kernels::kernel_names()) kernel_help += (kernel_help.back() == ':' ? " " : ", ") + name;
  desc.add_options()
      ("device", po::value(&device_name), "device preset name (a100-40gb, a100-80gb, h100-sxm, h200, teaching, scratchpad-accel) or a device YAML path; may be left out when the workload file names its own (device:, as a result point's config does)")
      ("workload", po::value(&workload_file), "workload YAML file (keys in docs/cli.md; a result point's config reruns the point)")
      ("kernel", po::value(&kernel), kernel_help.c_str())
      ("set", po::value(&sets)->composing(), "override KEY=VALUE (repeatable); device.<path>=VALUE overrides the device, e.g. --set device.l2.capacity_bytes=0 (L2 off: the closed-form setting) or --set device.l2.tracking_bytes=2048 (the block model: 3-7x faster, not for small L2s; docs/performance.md)")
      ("out", po::value(&out_path), "write the result to this HDF5 file (docs/hdf5-schema.md; a link, device or FIFO: docs/output-paths.md)")
      ("json", po::bool_switch(), "print the result as one JSON object instead of the text report")
      ("trace", po::value(&trace_path), "write the op timeline of the --trace-ctas CTAs to this file: a tab-separated table, or a Chrome trace if it ends in .json (ui.perfetto.dev; docs/cli.md)")
      ("trace-ctas", po::value(&trace_ctas), "CTAs to trace, by index in dispatch order, e.g. 0,131,200-203 (default 0; at most 1024)")
      ("max-memory", po::value(&max_memory), "refuse a run whose estimated peak memory exceeds BYTES (e.g. 4294967296 or \"4 GiB\"; 0 = no limit; default: half the physical RAM)");
  po::variables_map vm;
  if (!parse_options(args, "attnsim run [--device DEV] (--workload FILE | --kernel NAME) [--set key=value]... [--out FILE.h5] [--json] [--max-memory BYTES] [--trace FILE [--trace-ctas LIST]]",
                     desc, vm, out))
    return 0;
  if (workload_file.empty() == kernel.empty())
    throw core::ConfigError(core::ConfigProblem{"", 0, "--workload/--kernel", "give exactly one of --workload FILE or --kernel NAME"});

  std::vector<config::Override> workload_overrides, device_overrides;
  if (!out_path.empty()) check_output_path(out_path, "--out");
  if (trace_path.empty() && !trace_ctas.empty())
    throw core::ConfigError(core::ConfigProblem{"", 0, "--trace-ctas", "give --trace FILE too"});
  if (!trace_path.empty()) check_output_path(trace_path, "--trace");
  config::split_overrides(config::parse_overrides(sets), workload_overrides, device_overrides);
  config::WorkloadFileDevice file_device;
  core::Workload workload = workload_file.empty()
                                ? config::workload_for_kernel(kernel, workload_overrides)
                                : config::load_workload_file(workload_file, workload_overrides, &file_device);
  // --device, else the workload file's own device with its overrides (a point's config).
  device_name = config::device_for_run(device_name, file_device, device_overrides, "");
  if (device_name.empty())
    throw core::ConfigError(core::ConfigProblem{
        "", 0, "--device", "give --device DEV (a preset name or device YAML path)" +
                               std::string(workload_file.empty() ? "" : ", or a workload file with device:")});
  core::DeviceSpec device = config::load_device(device_name, device_overrides);

  RunOptions options;
  if (!max_memory.empty()) {
    config::YamlReader reader("");
    const auto bytes = reader.as_bytes(YAML::Node(max_memory), "--max-memory");
    reader.throw_if_problems();
    options.max_memory_bytes = *bytes;
  }
  // Progress on stderr for long runs (nothing for short ones): on a terminal after 1 s, a line
  // rewritten in place; in a log a line every 10 s after the first 10 s. Run in-process (the
  // Python module), the context's stream instead, and its stop flag ends the run.
  const CommandContext& context = command_context();
  const bool terminal = context.progress ? context.progress_is_terminal : ::isatty(STDERR_FILENO) != 0;
  RunProgressPrinter progress(context.progress ? context.progress : &std::cerr, terminal, terminal ? 1.0 : 10.0,
                              terminal ? 0.25 : 10.0);
  options.interrupt = context.interrupt;
  options.engine.progress = [&progress](const engine::LaunchProgress& p) { progress(p); };
  TraceCollector trace;
  core::RunResult result;
  try {
    if (!trace_path.empty()) {
      options.engine.trace_ctas = parse_cta_list(trace_ctas.empty() ? "0" : trace_ctas, "--trace-ctas");
      check_traced_ctas(options.engine.trace_ctas, kernels::make_program(workload, device), "--trace-ctas");
      options.engine.trace = [&trace](const engine::TraceRecord& r) { trace.add(r); };
    }
    result = run_workload(workload, device, options);
  } catch (const core::ConfigError& e) {  // a kernel's own check names a key: say where it was given
    throw config::locate_workload_problems(e, workload_file, workload_overrides);
  }
  progress.finish();

  if (!trace_path.empty()) write_trace(trace_path, trace, device);
  if (!out_path.empty())
    io::write_run_h5(out_path, result, device, io::Provenance::current(command_line("run", args)),
                     config::point_config_yaml(result.workload, device_name, device_overrides));
  std::ostream& report = report_stream(out_path, out);
  if (vm["json"].as<bool>()) {
    io::write_run_json(result, device, report);
  } else {
    io::print_run_summary(result, device, report, kernels::block_size_rule(result.workload));
    if (!out_path.empty()) report << "wrote " << out_path << "\n";
    if (!trace_path.empty()) {
      report << "wrote " << trace_path << " (" << trace.size() << " ops); where the traced CTAs' time went:\n";
      report << trace.summary(8);
    }
  }
  return 0;
}

}  // namespace attnsim::app
