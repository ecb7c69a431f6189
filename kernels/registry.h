// The kernel registry: one descriptor per kernel (name, factory, closed form, functional
// schedule, `attnsim check` grid, the workload keys it reads, what it models). An explicit table
// (see registry.cpp), no static-initialisation macros. Nothing outside kernels/ compares kernel
// names: other layers ask the descriptor (tests/kernels/no_kernel_names_test.cpp checks it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/precision.h"
#include "sim/core/device_spec.h"
#include "sim/core/io_counts.h"
#include "sim/core/tile_program.h"

namespace attnsim::kernels {

using ProgramFactory = core::TileProgram (*)(const core::Workload&, const core::DeviceSpec&);
// Bytes per tensor per launch of a resolved workload: every access to HBM (compulsory = false),
// or each distinct byte once (compulsory = true; see core::compulsory_traffic's contract).
using ClosedForm = std::vector<core::LaunchTraffic> (*)(const core::Workload&, bool compulsory);
// Runs the kernel's tile schedule on numbers; returns the max relative error (functional.h).
using FunctionalSchedule = double (*)(const core::Workload&, Precision);
// Appends the small workloads `attnsim check` runs for this kernel without a sweep file.
using CheckGrid = void (*)(std::vector<core::Workload>&);

struct KernelEntry {
  const char* name;
  ProgramFactory make;
  const char* summary;
  ClosedForm closed_form = nullptr;        // nullptr: none (microbenchmarks)
  FunctionalSchedule functional = nullptr;  // nullptr: no functional mode
  CheckGrid check_grid = nullptr;           // nullptr: not in the built-in check grid
  std::vector<std::string_view> keys;      // workload keys it reads (besides `kernel`)
  bool models_stack_frame = false;          // stack_frame_bytes (register spills) is modelled
  bool gemm_tiles = false;                  // tiled as GEMMs (block_m x block_n, k-tile block_k)
  std::vector<std::string_view> measured_names;  // names in measured data (ncu CSV "variant")
  const char* single_query_fallback = nullptr;  // also matches measured rows with seq_q = 1
  // Measured variants that name one implementation (workload key `impl`): a simulated point
  // matches such a row only with that `impl` (a point without the key has the default, "fa2").
  std::vector<std::pair<std::string_view, std::string_view>> measured_impls = {};
  std::uint32_t min_compute_capability = 0;  // GPUs below it (and scratchpad devices) cannot run it; 0: any
};
// The implementation named by a workload's `impl` value ("fa2", "triton"), or nullopt.
std::optional<core::KernelImpl> parse_kernel_impl(std::string_view value);
// The `impl` a measured variant implies for `entry` ("" when it implies none).
std::string_view measured_impl(const KernelEntry& entry, std::string_view variant);

const std::vector<KernelEntry>& kernel_registry();
// The entry named `name` in the built-in registry (or in `table`), or nullptr.
const KernelEntry* find_kernel(std::string_view name);
const KernelEntry* find_kernel(std::string_view name, const std::vector<KernelEntry>& table);
// The registered names, in registry order.
std::vector<std::string> kernel_names();

// Resolves defaults (block sizes, warps, stages, registers, shared memory) for the device and
// builds the launches. Throws core::ConfigError for an unknown kernel or an impossible
// workload (tiles that do not fit in shared memory, heads not divisible by kv_heads, ...).
core::TileProgram make_program(const core::Workload& workload, const core::DeviceSpec& device);
// The same with the kernels of `table` (a test's own registry).
core::TileProgram make_program(const core::Workload& workload, const core::DeviceSpec& device,
                               const std::vector<KernelEntry>& table);

// The kernel's closed forms (empty for a kernel without one); see core/io_counts.h.
std::vector<core::LaunchTraffic> closed_form_traffic(const core::Workload& resolved);
std::vector<core::LaunchTraffic> compulsory_traffic(const core::Workload& resolved);

// The built-in grid of `attnsim check`: every kernel's check_grid, in registry order; with a
// device, only the kernels it can run (min_compute_capability).
std::vector<core::Workload> check_grid();
std::vector<core::Workload> check_grid(const core::DeviceSpec& device);
// Whether `device` can run the kernel (compute capability; scratchpad devices run kernels without one).
bool runs_on(const KernelEntry& e, const core::DeviceSpec& device);

}  // namespace attnsim::kernels
