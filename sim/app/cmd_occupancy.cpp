// `attnsim occupancy`: the CUDA occupancy rules (core::compute_occupancy) for one block shape
// on a device preset: the four launch__occupancy_limit_* values, active blocks and warps per
// SM, sm__maximum_warps_per_active_cycle_pct and which limit binds.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/app/cli_common.h"
#include "sim/app/commands.h"
#include "sim/config/device_loader.h"
#include "sim/config/overrides.h"
#include "sim/core/errors.h"
#include "sim/core/occupancy.h"
#include "sim/io/json_writer.h"
#include "sim/io/table_printer.h"

namespace attnsim::app {

namespace {

const char* const kUsage =
    "attnsim occupancy --device DEV --threads T --regs R [--smem BYTES] [--carveout BYTES]\n"
    "       [--set device.KEY=VALUE]... [--json]\n\n"
    "CUDA occupancy rules (CUDA Programming Guide; cuda_occupancy.h) for blocks of T threads using\n"
    "R registers per thread and BYTES of shared memory (static + dynamic, without the reserve):\n"
    "  warps:      floor(max warps per SM / ceil(T / warp size))\n"
    "  registers:  per warp ceil(R x 32 / 256) x 256, allocated in each of the 4 sub-partitions\n"
    "  shared mem: per block ceil((BYTES + reserved) / 128) x 128 out of the carve-out\n"
    "  blocks:     the device's resident-block limit\n"
    "Without --carveout the carve-out is the driver's choice, which NVIDIA does not publish; attnsim\n"
    "uses a rule fitted to the 27 H200 launches of tests/data/reference/kernels.csv: the smallest\n"
    "carve-out the device supports that holds the largest of\n"
    "  one block,\n"
    "  min(warp, register, block limits) blocks  (never lower occupancy below the other limits),\n"
    "  min(warp, block limits) + 1 blocks        (one block more than the warp/block slots allow),\n"
    "                                            capped at half the SM's shared memory\n"
    "(the largest usable carve-out if none holds it). DEV is a preset name or a YAML path.";

std::uint64_t non_negative(std::int64_t v, const char* flag) {
  if (v < 0) throw core::ConfigError(core::ConfigProblem{"", 0, flag, "must not be negative"});
  return static_cast<std::uint64_t>(v);
}

std::uint32_t fits_u32(std::uint64_t v, const char* flag) {
  if (v > 0xffffffffull) throw core::ConfigError(core::ConfigProblem{"", 0, flag, "too large"});
  return static_cast<std::uint32_t>(v);
}

}  // namespace

int cmd_occupancy(const Args& args, std::ostream& out) {
  std::string device_name;
  std::int64_t threads = 0, regs = 0, smem = 0, carveout = -1;
  std::vector<std::string> sets;
  bool json = false;
  po::options_description desc("options");
  desc.add_options()
      ("device", po::value<std::string>(&device_name)->required(), "device preset name or YAML path")
      ("threads", po::value<std::int64_t>(&threads)->required(), "threads per block")
      ("regs", po::value<std::int64_t>(&regs)->required(), "registers per thread")
      ("smem", po::value<std::int64_t>(&smem)->default_value(0), "shared memory per block in bytes (static + dynamic)")
      ("carveout", po::value<std::int64_t>(&carveout), "shared-memory carve-out in bytes (default: driver's choice)")
      ("set", po::value<std::vector<std::string>>(&sets)->composing(), "override a device key: device.KEY=VALUE")
      ("json", po::bool_switch(&json), "print JSON");
  po::variables_map vm;
  if (!parse_options(args, kUsage, desc, vm, out)) return 0;

  core::OccupancyInput in;
  in.threads_per_block = fits_u32(non_negative(threads, "--threads"), "--threads");
  in.regs_per_thread = fits_u32(non_negative(regs, "--regs"), "--regs");
  in.smem_per_block = non_negative(smem, "--smem");
  if (vm.count("carveout")) in.carveout_bytes = non_negative(carveout, "--carveout");

  // --set takes device keys, with or without the "device." prefix.
  std::vector<config::Override> device_overrides;
  for (auto o : config::parse_overrides(sets)) {
    if (o.key.rfind("device.", 0) == 0) o.key = o.key.substr(7);
    device_overrides.push_back(o);
  }
  const core::DeviceSpec device = config::load_device(device_name, device_overrides);
  if (device.kind != core::DeviceKind::kGpu)
    throw core::ConfigError(core::ConfigProblem{"", 0, "--device",
                                                "'" + device.name + "' is a scratchpad device; occupancy rules apply to GPUs"});

  core::OccupancyResult r;
  try {
    r = core::compute_occupancy(device.sm, in);
  } catch (const core::ConfigError& e) {
    std::vector<core::ConfigProblem> problems = e.problems();
    for (auto& p : problems)
      if (!p.key_path.empty() && p.key_path.rfind("--", 0) != 0) p.key_path = "--" + p.key_path;
    throw core::ConfigError(problems);
  }
  const std::uint64_t warps_per_block = core::ceil_div(in.threads_per_block, device.sm.warp_size);
  const std::uint64_t unit = device.sm.shared_mem_allocation_unit_bytes;
  const core::Bytes smem_alloc =
      core::ceil_div(in.smem_per_block + device.sm.shared_mem_reserved_per_block_bytes, unit) * unit;

  if (json) {
    io::JsonWriter j(out);
    j.begin_object();
    j.key("device");
    j.value(device.name);
    j.key("launch__block_size");
    j.value(std::uint64_t{in.threads_per_block});
    j.key("launch__registers_per_thread");
    j.value(std::uint64_t{in.regs_per_thread});
    j.key("shared_mem_per_block_bytes");
    j.value(std::uint64_t{in.smem_per_block});
    j.key("shared_mem_allocated_per_block_bytes");
    j.value(std::uint64_t{smem_alloc});
    j.key("launch__shared_mem_config_size");
    j.value(std::uint64_t{r.carveout_bytes});
    j.key("carveout_requested");
    j.value(in.carveout_bytes.has_value());
    j.key("warps_per_block");
    j.value(warps_per_block);
    j.key("launch__occupancy_limit_blocks");
    j.value(std::uint64_t{r.limit_blocks});
    j.key("launch__occupancy_limit_registers");
    j.value(std::uint64_t{r.limit_registers});
    j.key("launch__occupancy_limit_shared_mem");
    j.value(std::uint64_t{r.limit_shared_mem});
    j.key("launch__occupancy_limit_warps");
    j.value(std::uint64_t{r.limit_warps});
    j.key("active_blocks_per_sm");
    j.value(std::uint64_t{r.active_blocks});
    j.key("active_warps_per_sm");
    j.value(std::uint64_t{r.active_warps});
    j.key("sm__maximum_warps_per_active_cycle_pct");
    j.value(r.max_warps_pct);
    j.key("limiter");
    j.value(r.limiter);
    j.end_object();
    j.finish();
    return 0;
  }

  io::TablePrinter t({"quantity", "value"});
  t.add_row({"device", device.name});
  t.add_row({"block", std::to_string(in.threads_per_block) + " threads = " + std::to_string(warps_per_block) + " warps"});
  t.add_row({"registers per thread", std::to_string(in.regs_per_thread)});
  t.add_row({"shared memory per block",
             std::to_string(in.smem_per_block) + " B (+ " + std::to_string(device.sm.shared_mem_reserved_per_block_bytes) +
                 " reserved -> " + std::to_string(smem_alloc) + " B allocated)"});
  t.add_row({"carve-out", std::to_string(r.carveout_bytes) + " B" + (in.carveout_bytes ? "" : " (driver's choice)")});
  t.add_row({"launch__occupancy_limit_blocks", std::to_string(r.limit_blocks)});
  t.add_row({"launch__occupancy_limit_registers", std::to_string(r.limit_registers)});
  t.add_row({"launch__occupancy_limit_shared_mem", std::to_string(r.limit_shared_mem)});
  t.add_row({"launch__occupancy_limit_warps", std::to_string(r.limit_warps)});
  t.add_row({"active blocks per SM", std::to_string(r.active_blocks)});
  t.add_row({"active warps per SM", std::to_string(r.active_warps) + " of " + std::to_string(device.sm.max_warps_per_sm)});
  t.add_row({"sm__maximum_warps_per_active_cycle_pct", io::TablePrinter::format_value(r.max_warps_pct)});
  t.add_row({"limiter", r.limiter});
  t.print(out);
  return 0;
}

}  // namespace attnsim::app
