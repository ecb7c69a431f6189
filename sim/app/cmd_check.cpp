// `attnsim check [FILE.yaml] [--device DEV] [--set key=value]...`: for each workload (the built-in
// grid, one workload file, or every possible point of a sweep file), the op
// stream's bytes and the engine's HBM bytes with the L2 off against core's closed forms, and
// functional mode (double) against plain attention. Exit 1 on any mismatch.
#include <cmath>
#include <iomanip>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "kernels/functional.h"
#include "kernels/registry.h"
#include "sim/app/cli_common.h"
#include "sim/config/device_loader.h"
#include "sim/config/input_file.h"
#include "sim/config/overrides.h"
#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/io_counts.h"
#include "sim/core/traffic_counter.h"
#include "sim/engine/engine.h"

namespace attnsim::app {

namespace {

constexpr double kFunctionalTolerance = 1e-12;

std::vector<core::Workload> builtin_grid() {
  std::vector<core::Workload> out;
  for (const char* kernel : {"standard", "flash1", "flash2", "flash_decode"})
    for (bool causal : {false, true})
      for (std::uint64_t kvh : {4, 1})
        for (auto pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
          const std::string k = kernel;
          if (pass == core::Pass::kFwdBwd && k == "flash_decode") continue;
          core::Workload w;
          w.kernel = k;
          w.batch = 2;
          w.heads = 4;
          w.kv_heads = kvh;
          w.seq_q = k == "flash_decode" ? 4 : 100;
          w.seq_kv = k == "flash_decode" ? 300 : 100;
          w.head_dim = 16;
          w.causal = causal;
          w.pass = pass;
          w.block_m = 32;
          w.block_n = 32;
          w.block_k = 16;
          w.warps = 4;
          w.num_splits = k == "flash_decode" ? 3 : 0;
          out.push_back(w);
        }
  // GQA decode: one query token, FA-2's packed schedule (query heads of a group as rows).
  for (const char* kernel : {"flash2", "flash_decode"})
    for (std::uint64_t kvh : {2, 1})
      for (std::uint64_t splits : {0, 3}) {
        const std::string k = kernel;
        if (k == "flash2" && splits != 0) continue;
        core::Workload w;
        w.kernel = k;
        w.batch = 2;
        w.heads = 8;
        w.kv_heads = kvh;
        w.seq_q = 1;
        w.seq_kv = 300;
        w.head_dim = 16;
        w.causal = splits == 3;
        w.block_m = 32;
        w.block_n = 32;
        w.warps = 4;
        w.num_splits = splits;
        out.push_back(w);
      }
  return out;
}

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

struct CheckPoint {
  core::Workload workload;
  std::shared_ptr<const core::DeviceSpec> device;
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

// The possible points of a sweep file, each on its own device with every access sent to HBM;
// impossible points are counted, not checked; microbenchmarks have no closed form and are skipped.
std::vector<CheckPoint> sweep_points(const std::string& file, std::uint64_t& skipped) {
  const config::SweepSpec spec = config::SweepLoader::load_file(file);
  const config::SweepExpander expander(spec);
  std::vector<CheckPoint> out;
  for (std::uint64_t i = 0; i < expander.size(); ++i) {
    config::SweepPoint p = expander.point(i);
    if (!p.possible || p.workload.kernel == "pointer_chase" || p.workload.kernel == "stream_read" ||
        p.workload.kernel == "stream_copy") {
      ++skipped;
      continue;
    }
    auto device = std::make_shared<core::DeviceSpec>(*p.device);
    every_access_to_hbm(*device);
    out.push_back({p.workload, device});
  }
  return out;
}

std::string label(const core::Workload& w) {
  std::ostringstream s;
  s << w.kernel << " B" << w.batch << " H" << w.heads << "/" << w.kv_heads << " N" << w.seq_q << "x" << w.seq_kv
    << " d" << w.head_dim << " " << w.block_m << "x" << w.block_n << (w.causal ? " causal" : "") << (w.pass == core::Pass::kFwdBwd ? " fwdbwd" : "");
  return s.str();
}

}  // namespace

int cmd_check(const Args& args, std::ostream& out) {
  std::string file, device_name = "h200";
  std::vector<std::string> sets;
  po::options_description desc("options");
  desc.add_options()
      ("file", po::value(&file), "workload YAML or sweep YAML (default: the built-in grid)")
      ("device", po::value(&device_name), "device preset or YAML for a workload file or the grid (default h200; a sweep uses its own); its L2 and the L1 for global loads are turned off")
      ("set", po::value(&sets)->composing(), "key=value override (workload or device.*)");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse_options(args, "attnsim check [FILE.yaml] [--device DEV] [--set key=value]...", desc, vm, out, &pos))
    return 0;

  std::vector<config::Override> workload_overrides, device_overrides;
  config::split_overrides(config::parse_overrides(sets), workload_overrides, device_overrides);
  std::uint64_t skipped = 0;
  std::vector<CheckPoint> points;
  if (!file.empty()) config::require_readable_file(file, "", "check file");
  if (!file.empty() && is_sweep_file(file)) {
    if (!sets.empty())
      throw core::ConfigError(core::ConfigProblem{file, 0, "--set", "a sweep file takes its overrides from its own `set:`"});
    points = sweep_points(file, skipped);
  } else {
    device_overrides.push_back({"l2.capacity_bytes", "0"});  // every global access reaches HBM:
    device_overrides.push_back({"sm.l1_caches_global_loads", "false"});  // no L2, no L1 for global loads
    auto device = std::make_shared<const core::DeviceSpec>(config::load_device(device_name, device_overrides));
    if (file.empty()) {
      for (const auto& w : builtin_grid()) points.push_back({w, device});
    } else {
      points.push_back({config::load_workload_file(file, workload_overrides), device});
    }
  }

  out << std::left << std::setw(44) << "workload" << std::right << std::setw(14) << "ops-vs-form" << std::setw(14)
      << "dram-vs-form" << std::setw(14) << "functional" << "  status\n";
  std::size_t failures = 0;
  std::vector<std::string> firsts;
  for (const auto& [w, device] : points) {
    const core::TileProgram program = kernels::make_program(w, *device);
    const auto want = core::closed_form_traffic(program.workload);
    std::string first;
    std::vector<core::TensorTraffic> ops, dram;
    for (const auto& l : core::TrafficCounter::count(program)) ops.push_back(l.traffic);
    const core::Bytes d_ops = difference(ops, want, first);
    for (const auto& k : engine::simulate(*device, program)) dram.push_back(k.tensors.dram);
    const core::Bytes d_dram = difference(dram, want, first);
    const double err = kernels::run_functional(program.workload);
    const bool ok = d_ops == 0 && d_dram == 0 && err <= kFunctionalTolerance;
    if (!ok) {
      ++failures;
      firsts.push_back(label(w) + ": " + (first.empty() ? "functional error " + std::to_string(err) : first));
    }
    std::ostringstream e;
    e << std::scientific << std::setprecision(1) << err;
    out << std::left << std::setw(44) << label(w) << std::right << std::setw(14) << d_ops << std::setw(14) << d_dram
        << std::setw(14) << e.str() << "  " << (ok ? "ok" : "MISMATCH") << "\n";
  }
  if (skipped) out << skipped << " sweep points skipped (impossible, or microbenchmarks without a closed form)\n";
  for (const auto& f : firsts) out << "first difference: " << f << "\n";
  out << points.size() - failures << " of " << points.size() << " workloads match (bytes exact, functional <= "
      << kFunctionalTolerance << ")\n";
  return failures ? 1 : 0;
}

}  // namespace attnsim::app
