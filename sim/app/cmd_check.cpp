// `attnsim check [FILE.yaml] [--device DEV] [--set key=value]... [-j N] [--json] [--no-functional]
// [--strict]`: for each workload (the built-in grid, one workload file, or every point of a sweep
// file), the op stream's bytes and the engine's HBM bytes with the L2 off against core's closed
// forms, and functional mode (double) against plain attention. Exit 1 on any mismatch (with
// --strict also on an impossible sweep point). Output shapes: docs/check.md.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <iomanip>
#include <sstream>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "kernels/functional.h"
#include "kernels/registry.h"
#include "sim/app/cli_common.h"
#include "sim/app/command_context.h"
#include "sim/config/device_loader.h"
#include "sim/config/input_file.h"
#include "sim/config/overrides.h"
#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/io_counts.h"
#include "sim/core/traffic_counter.h"
#include "sim/engine/engine.h"
#include "sim/io/json_writer.h"

namespace attnsim::app {

namespace {

constexpr double kFunctionalTolerance = 1e-12;

// Sum over launches and tensors of |got - want| bytes; first difference described in `first`.
core::Bytes difference(const std::vector<core::TensorTraffic>& got, const std::vector<core::LaunchTraffic>& want,
                       std::string& first) {
  core::Bytes diff = 0;
  if (got.size() != want.size()) {
    first = std::to_string(got.size()) + " launches vs " + std::to_string(want.size()) + " in the closed forms";
    return 1;
  }
  for (std::size_t l = 0; l < got.size(); ++l)
    for (std::size_t t = 0; t < core::kNumTensors; ++t) {
      const auto& g = got[l].by_tensor[t];
      const auto& e = want[l].traffic.by_tensor[t];
      const core::Bytes d = (g.read > e.read ? g.read - e.read : e.read - g.read) +
                            (g.write > e.write ? g.write - e.write : e.write - g.write);
      if (d && first.empty())
        first = want[l].kernel_name + " " + std::string(core::to_string(static_cast<core::Tensor>(t))) + ": read " +
                std::to_string(g.read) + " vs " + std::to_string(e.read) + ", write " + std::to_string(g.write) +
                " vs " + std::to_string(e.write);
      diff += d;
    }
  return diff;
}

// Turns the L2 and the L1 for global loads off: every global access reaches HBM.
void every_access_to_hbm(core::DeviceSpec& device) {
  device.l2.capacity_bytes = 0;
  device.sm.l1_caches_global_loads = false;
}

// One row of the check: a workload to check, or a sweep point that is impossible or skipped.
struct CheckPoint {
  core::Workload workload;
  std::shared_ptr<const core::DeviceSpec> device;
  std::vector<std::pair<std::string, std::string>> params;  // a sweep point's swept keys and values
                                                             // (a key a null axis value left unset is absent)
  std::uint64_t index = 0;                                   // a sweep point's index
  bool from_sweep = false;
  std::string status = "pending";  // then ok, mismatch, impossible or skipped
  std::string reason;              // impossible / skipped: why; mismatch: the first difference
  core::Bytes ops_diff = 0, dram_diff = 0;
  double functional_error = 0;
  bool functional_run = false;
};

// A sweep file has `axes` or `base` at the top; anything else is read as one workload.
bool is_sweep_file(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception&) {
    return false;  // the workload loader reports the problem with its location
  }
  return root.IsMap() && (root["axes"] || root["base"]);
}

// Every point of a sweep file, each on its own device with every access sent to HBM. Impossible
// points are kept as such (as `attnsim sweep` keeps them); microbenchmarks have no closed form
// and are skipped.
std::vector<CheckPoint> sweep_points(const std::string& file) {
  const config::SweepSpec spec = config::SweepLoader::load_file(file);
  const config::SweepExpander expander(spec);
  bool device_is_axis = false;
  for (const auto& g : spec.groups)
    for (const auto& a : g.axes) device_is_axis = device_is_axis || a.key == "device";
  std::vector<CheckPoint> out;
  for (std::uint64_t i = 0; i < expander.size(); ++i) {
    config::SweepPoint p = expander.point(i);
    CheckPoint c;
    c.index = i;
    c.from_sweep = true;
    for (const auto& [k, v] : p.params)
      if ((k != "device" || device_is_axis) && !config::is_unset(v))
        c.params.emplace_back(k, config::sweep_value_yaml(v));
    if (!p.possible) {
      c.status = "impossible";
      c.reason = p.reason;
    } else {
      c.workload = p.workload;
      const kernels::KernelEntry* kernel = kernels::find_kernel(c.workload.kernel);
      if (!kernel || !kernel->closed_form) {
        c.status = "skipped";
        c.reason = "microbenchmark without a closed form";
      } else {
        auto device = std::make_shared<core::DeviceSpec>(*p.device);
        every_access_to_hbm(*device);
        c.device = device;
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string label(const core::Workload& w) {
  std::ostringstream s;
  // Tiles the kernel picks itself (0) print as "auto"; a dtype other than fp16, a split count set
  // (flash_decode), an impl other than fa2 (with TMA: its warps) and a packed qkv are named, so
  // that no two rows of the grid read the same.
  auto tile = [](std::uint64_t b) { return b ? std::to_string(b) : std::string("auto"); };
  s << w.kernel << " B" << w.batch << " H" << w.heads << "/" << w.kv_heads << " N" << w.seq_q << "x" << w.seq_kv
    << " d" << w.head_dim;
  if (w.block_m || w.block_n) s << " " << tile(w.block_m) << "x" << tile(w.block_n);
  if (w.dtype != core::DType::kFp16) s << " " << core::to_string(w.dtype);
  if (w.num_splits) s << " splits" << w.num_splits;
  if (w.impl != core::KernelImpl::kFa2) s << " " << core::to_string(w.impl);
  if (w.tma == 1) s << " tma " << w.warps << " warps";
  if (w.qkv_packed) s << " qkv_packed";
  if (w.scale_kernel) s << " scale_kernel";
  if (w.pytorch != core::kDefaultPytorch) s << " pytorch " << w.pytorch;
  s << (w.causal ? " causal" : "") << (w.pass == core::Pass::kFwdBwd ? " fwdbwd" : "");
  if (w.page_size > 0) s << " page" << w.page_size << " " << core::to_string(w.page_placement);
  if (const std::string k = core::to_string(w.kv_lengths); !k.empty()) s << " kv_lengths " << k;
  return s.str();
}

// A row's name: the workload, then a sweep point's every swept key (so that points differing
// only in, say, stages or warps are told apart); an impossible point has only its keys.
std::string row_label(const CheckPoint& c) {
  std::string s;
  if (c.status != "impossible" || !c.from_sweep) s = label(c.workload);
  for (const auto& [k, v] : c.params) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

// Checks one workload. A workload the kernel cannot build (a tile that does not fit) is
// impossible for a sweep point, as in `attnsim sweep`, and bad input (rethrown) otherwise.
void check_point(CheckPoint& c, bool functional) {
  core::TileProgram program;
  try {
    program = kernels::make_program(c.workload, *c.device);
  } catch (const core::ConfigError& e) {
    if (!c.from_sweep) throw;
    c.status = "impossible";
    c.reason = e.what();
    return;
  }
  const auto want = kernels::closed_form_traffic(program.workload);
  std::string first;
  std::vector<core::TensorTraffic> ops, dram;
  for (const auto& l : core::TrafficCounter::count(program)) ops.push_back(l.traffic);
  c.ops_diff = difference(ops, want, first);
  // Run in-process (the Python module), the context's stop flag ends the check.
  const std::atomic<bool>* interrupt = command_context().interrupt;
  engine::EngineOptions engine_options;
  engine_options.sampled = program.workload.sim_mode == core::SimMode::kSampled;
  engine_options.sampled_min_ops = program.workload.sim_min_ops;
  if (interrupt) engine_options.progress = [interrupt](const engine::LaunchProgress&) { throw_if_interrupted(interrupt); };
  for (const auto& k : engine::simulate(*c.device, program, engine_options)) dram.push_back(k.tensors.dram);
  c.dram_diff = difference(dram, want, first);
  if (functional) {
    c.functional_error = kernels::run_functional(program.workload, kernels::Precision::kFp64,
                                                 [interrupt] { throw_if_interrupted(interrupt); });
    c.functional_run = true;
  }
  const bool functional_ok = !functional || c.functional_error <= kFunctionalTolerance;
  c.status = c.ops_diff == 0 && c.dram_diff == 0 && functional_ok ? "ok" : "mismatch";
  if (c.status == "mismatch") c.reason = first.empty() ? "functional error " + std::to_string(c.functional_error) : first;
}

// Runs check_point on `jobs` threads (each with the caller's CommandContext); each point's result
// lands in its own slot, so the output does not depend on the thread count. The first exception in
// point order is rethrown; when the context asks to stop, no new point starts and Interrupted is thrown.
void check_all(std::vector<CheckPoint>& points, bool functional, unsigned jobs) {
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].status == "pending") todo.push_back(i);
  std::vector<std::exception_ptr> errors(points.size());
  std::atomic<std::size_t> next{0};
  const CommandContext context = command_context();
  auto worker = [&]() {
    const ScopedCommandContext scope(context);
    for (std::size_t t; !(context.interrupt && context.interrupt->load()) && (t = next.fetch_add(1)) < todo.size();) {
      try {
        check_point(points[todo[t]], functional);
      } catch (...) {
        errors[todo[t]] = std::current_exception();
      }
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(todo.size())));
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < n; ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  throw_if_interrupted(context.interrupt);
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

struct Tally {
  std::size_t checked = 0, match = 0, mismatch = 0, impossible = 0, skipped = 0;
};

Tally tally(const std::vector<CheckPoint>& points) {
  Tally t;
  for (const auto& c : points) {
    if (c.status == "ok" || c.status == "mismatch") ++t.checked;
    if (c.status == "ok") ++t.match;
    if (c.status == "mismatch") ++t.mismatch;
    if (c.status == "impossible") ++t.impossible;
    if (c.status == "skipped") ++t.skipped;
  }
  return t;
}

void write_text(const std::vector<CheckPoint>& points, bool sweep, bool functional, bool strict, std::ostream& out) {
  std::size_t width = 44;
  for (const auto& c : points) width = std::max(width, row_label(c).size() + 2);
  const int w = static_cast<int>(width);
  out << std::left << std::setw(w) << "workload" << std::right << std::setw(14) << "ops-vs-form" << std::setw(14)
      << "dram-vs-form" << std::setw(14) << "functional" << "  status\n";
  for (const auto& c : points) {
    out << std::left << std::setw(w) << row_label(c) << std::right;
    if (c.status == "ok" || c.status == "mismatch") {
      std::ostringstream e;
      if (c.functional_run) e << std::scientific << std::setprecision(1) << c.functional_error;
      else e << "-";
      out << std::setw(14) << c.ops_diff << std::setw(14) << c.dram_diff << std::setw(14) << e.str() << "  "
          << (c.status == "ok" ? "ok" : "MISMATCH") << "\n";
    } else {
      out << std::setw(14) << "-" << std::setw(14) << "-" << std::setw(14) << "-" << "  " << c.status << ": "
          << c.reason << "\n";
    }
  }
  const Tally t = tally(points);
  if (sweep)
    out << "sweep: " << points.size() << " points: " << t.checked << " checked, " << t.impossible << " impossible, "
        << t.skipped << " skipped (microbenchmarks without a closed form)\n";
  for (const auto& c : points)
    if (c.status == "mismatch") out << "first difference: " << row_label(c) << ": " << c.reason << "\n";
  out << t.match << " of " << t.checked << " workloads match (bytes exact, functional ";
  if (functional) out << "<= " << kFunctionalTolerance << ")\n";
  else out << "not run)\n";
  if (strict && t.impossible) out << "--strict: " << t.impossible << " impossible sweep points\n";
}

void write_json(const std::vector<CheckPoint>& points, const std::string& file, const std::string& device, bool sweep,
                bool functional, bool strict, int exit_code, std::ostream& out) {
  io::JsonWriter j(out);
  j.begin_object();
  j.key("input");
  j.value(file.empty() ? "grid" : sweep ? "sweep" : "workload");
  j.key("file");
  if (file.empty()) j.null();
  else j.value(file);
  j.key("device");
  if (sweep) j.null();
  else j.value(device);
  j.key("functional");
  j.value(functional);
  j.key("functional_tolerance");
  j.value(kFunctionalTolerance);
  j.key("strict");
  j.value(strict);
  j.key("points");
  j.begin_array();
  for (const auto& c : points) {
    j.begin_object();
    j.key("label");
    j.value(row_label(c));
    if (c.from_sweep) {
      j.key("index");
      j.value(c.index);
      j.key("params");
      j.begin_object();
      for (const auto& [k, v] : c.params) {
        j.key(k);
        j.value(v);
      }
      j.end_object();
    }
    j.key("status");
    j.value(c.status);
    const bool checked = c.status == "ok" || c.status == "mismatch";
    j.key("ops_diff_bytes");
    if (checked) j.value(c.ops_diff);
    else j.null();
    j.key("dram_diff_bytes");
    if (checked) j.value(c.dram_diff);
    else j.null();
    j.key("functional_max_rel_error");
    if (checked && c.functional_run) j.value(c.functional_error);
    else j.null();
    j.key("reason");
    if (c.reason.empty()) j.null();
    else j.value(c.reason);
    j.end_object();
  }
  j.end_array();
  const Tally t = tally(points);
  j.key("summary");
  j.begin_object();
  for (const auto& [k, v] : {std::pair<const char*, std::size_t>{"points", points.size()},
                             {"checked", t.checked},
                             {"match", t.match},
                             {"mismatch", t.mismatch},
                             {"impossible", t.impossible},
                             {"skipped", t.skipped}}) {
    j.key(k);
    j.value(static_cast<std::uint64_t>(v));
  }
  j.end_object();
  j.key("exit_code");
  j.value(exit_code);
  j.end_object();
  j.finish();
}

}  // namespace

int cmd_check(const Args& args, std::ostream& out) {
  std::string file, device_name;
  std::vector<std::string> sets;
  int jobs = 0;
  po::options_description desc("options");
  desc.add_options()
      ("file", po::value(&file), "workload YAML or sweep YAML (default: the built-in grid)")
      ("device", po::value(&device_name)->default_value("h200"), "device preset or YAML for a workload file or the grid (default h200, or a workload file's own device:; a sweep uses its own); its L2 and the L1 for global loads are turned off")
      ("set", po::value(&sets)->composing(), "key=value override (workload or device.*)")
      ("jobs,j", po::value<int>(&jobs)->default_value(0),
       "workloads checked in parallel (0: the cores available); the output is the same for any N")
      ("json", po::bool_switch(), "print one JSON object (docs/check.md) instead of the table")
      ("no-functional", po::bool_switch(), "skip functional mode: bytes only, much faster")
      ("strict", po::bool_switch(), "exit 1 when a sweep has impossible points");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse_options(args,
                     "attnsim check [FILE.yaml] [--device DEV] [--set key=value]... [-j N] [--json] "
                     "[--no-functional] [--strict]",
                     desc, vm, out, &pos))
    return 0;
  if (jobs < 0) throw core::ConfigError(core::ConfigProblem{"", 0, "-j", "must not be negative"});
  const bool functional = !vm["no-functional"].as<bool>();
  const bool strict = vm["strict"].as<bool>();

  std::vector<config::Override> workload_overrides, device_overrides;
  config::split_overrides(config::parse_overrides(sets), workload_overrides, device_overrides);
  std::vector<CheckPoint> points;
  if (!file.empty()) config::require_readable_file(file, "", "check file");
  const bool sweep = !file.empty() && is_sweep_file(file);
  if (sweep) {
    if (!sets.empty())
      throw core::ConfigError(core::ConfigProblem{file, 0, "--set", "a sweep file takes its overrides from its own `set:`"});
    points = sweep_points(file);
  } else {
    std::vector<core::Workload> workloads;
    config::WorkloadFileDevice file_device;
    if (!file.empty()) workloads.push_back(config::load_workload_file(file, workload_overrides, &file_device));
    // --device, else a workload file's own device and its overrides (a point's config), else h200.
    device_name = config::device_for_run(vm["device"].defaulted() ? "" : device_name, file_device, device_overrides,
                                         device_name);
    device_overrides.push_back({"l2.capacity_bytes", "0"});              // every global access reaches HBM:
    device_overrides.push_back({"sm.l1_caches_global_loads", "false"});  // no L2, no L1 for global loads
    auto device = std::make_shared<const core::DeviceSpec>(config::load_device(device_name, device_overrides));
    if (file.empty()) {
      workloads = kernels::check_grid(*device);
      // --set sim.mode=sampled checks the grid's closed forms in sampled simulation (its
      // workloads are small: add --set sim.min_ops=0 to sample them).
      for (const auto& o : workload_overrides)
        if (o.key == "sim.mode" || o.key == "sim.min_ops") {
          const core::Workload sim = config::workload_for_kernel("flash2", {o});
          for (auto& w : workloads) {
            if (o.key == "sim.mode") w.sim_mode = sim.sim_mode;
            else w.sim_min_ops = sim.sim_min_ops;
          }
        }
    }
    for (const auto& w : workloads) {
      CheckPoint c;
      c.workload = w;
      c.device = device;
      points.push_back(std::move(c));
    }
  }
  const unsigned threads = jobs > 0 ? static_cast<unsigned>(jobs) : std::max(1u, std::thread::hardware_concurrency());
  try {
    check_all(points, functional, threads);
  } catch (const core::ConfigError& e) {  // one workload file the kernel refuses: where its key was given
    if (sweep) throw;
    throw config::locate_workload_problems(e, file, workload_overrides);
  }
  const Tally t = tally(points);
  const int code = t.mismatch || (strict && t.impossible) ? 1 : 0;
  if (vm["json"].as<bool>()) write_json(points, file, device_name, sweep, functional, strict, code, out);
  else write_text(points, sweep, functional, strict, out);
  return code;
}

}  // namespace attnsim::app
