// A device preset as validated, immutable data: every number the engine and the occupancy
// rules use. Loaded from configs/devices/*.yaml by sim/config; no YAML here.
#pragma once

#include <string>
#include <vector>

#include "sim/core/types.h"

namespace attnsim::core {

enum class DeviceKind : std::uint8_t { kGpu, kScratchpad };

struct HbmSpec {
  Bytes capacity_bytes = 0;
  std::uint32_t channels = 1;        // channels or pseudo-channels
  Bytes interleave_bytes = 256;      // address interleaving granularity across channels
  double bandwidth_gbps = 0;         // peak, all channels together, GB/s (1e9 B/s)
  double write_bandwidth_gbps = 0;   // the same for writes; 0 = bandwidth_gbps
  Cycles latency_cycles = 0;         // unloaded DRAM latency as seen by an SM (SM cycles)
};

struct L2Spec {
  Bytes capacity_bytes = 0;          // 0 = no L2: every global access goes to HBM
  Bytes line_bytes = 128;
  Bytes sector_bytes = 32;
  std::uint32_t associativity = 16;
  std::uint32_t partitions = 1;      // near/far partitions (H100/H200: 2)
  Cycles near_hit_latency_cycles = 0;
  Cycles far_hit_latency_cycles = 0;
  double bandwidth_gbps = 0;         // aggregate L2 bandwidth, GB/s
  std::string replacement = "lru";   // "lru"
  // true: dirty lines left in the L2 when a launch ends are written back and counted as that
  // launch's DRAM writes (every stored byte reaches HBM: the closed forms). false: Nsight
  // Compute accounting, which counts only DRAM traffic during the kernel.
  bool count_final_writeback = true;
  // true: launches run back to back, as a wall-clock timer of a program sees them: the write-back
  // of the dirty lines a launch leaves in the L2 occupies the HBM channels at the start of the
  // next launch, ahead of its own traffic. false: each launch starts on idle channels (Nsight
  // Compute's per-kernel time, caches flushed between kernels). Needs count_final_writeback.
  bool carry_writeback = false;
  // true: a read that hits a line whose fill from HBM is still on its way returns when the fill
  // arrives (an MSHR merge); false: at the hit latency (the tags are updated at request time).
  bool wait_for_pending_fills = false;
  // Granularity at which the engine tracks L2 residency and issues global requests: 0 or
  // line_bytes = the line-level model (default); a larger power of two (up to 64 sectors) = the
  // faster, approximate block model (docs/performance.md gives its measured error).
  Bytes tracking_bytes = 0;
};

// One MMA instruction flavour of the SM's tensor cores (device file: sm.mma.<flavour>). A tile MMA
// of this flavour occupies the SM's tensor pipe for flops / (flops_per_cycle x dtype scale) cycles
// (the pipe is shared by every flavour and every resident CTA), issues flops / (2 m n k)
// instructions of issue_warps warps each, and completes latency_cycles after its last
// instruction leaves the pipe (sim/engine/mma_pipe.*).
struct MmaFlavourSpec {
  bool present = false;             // the device file describes this flavour
  double flops_per_cycle = 0;       // sustained dense fp16/bf16 FLOP per cycle per SM
  double latency_cycles = 0;        // issue to result of one instruction
  std::uint32_t m = 0, n = 0, k = 0;  // the instruction's shape at fp16 (for the issue count)
  std::uint32_t issue_warps = 1;    // warps that issue one instruction together (mma.sync 1, wgmma 4)
  double fp8_scale = 0;             // fp8 rate / fp16 rate (0: fp8 runs at the fp16 rate)
  double tf32_scale = 0;            // tf32 (fp32 operands) rate / fp16 rate (0: the fp16 rate)
};

struct MmaFlavours {
  MmaFlavourSpec mma_sync;  // warp-level mma.sync (sm_80+)
  MmaFlavourSpec wgmma;     // warp-group wgmma.mma_async (sm_90a)
  MmaFlavourSpec tcgen05;   // tcgen05.mma (sm_100a; no preset describes it yet)
};

struct SmSpec {
  std::uint32_t count = 1;                      // number of SMs (or cores)
  std::uint32_t warp_size = 32;
  std::uint32_t max_threads_per_sm = 2048;
  std::uint32_t max_warps_per_sm = 64;
  std::uint32_t max_blocks_per_sm = 32;
  std::uint32_t max_threads_per_block = 1024;
  std::uint32_t registers_per_sm = 65536;       // 32-bit registers
  std::uint32_t max_registers_per_thread = 255;
  std::uint32_t max_registers_per_block = 65536;
  std::uint32_t register_allocation_unit = 256; // registers, allocated per warp
  std::uint32_t schedulers_per_sm = 4;          // SM sub-partitions; registers are split among them
  Bytes shared_mem_per_sm_bytes = 0;            // max carve-out usable as shared memory
  Bytes shared_mem_per_block_optin_bytes = 0;   // max dynamic+static per block (opt-in)
  Bytes shared_mem_reserved_per_block_bytes = 1024;
  Bytes shared_mem_allocation_unit_bytes = 128;
  std::vector<Bytes> shared_mem_carveouts_bytes;  // supported carve-outs, ascending
  Bytes l1_shared_total_bytes = 0;              // unified L1 + shared memory per SM
  std::uint32_t shared_mem_banks = 32;
  Bytes shared_mem_bank_bytes = 4;
  Cycles shared_mem_latency_cycles = 0;
  bool l1_caches_global_loads = true;
  Cycles l1_hit_latency_cycles = 0;
  double tensor_flops_per_cycle = 0;            // dense fp16/bf16 MMA FLOP per cycle per SM
  // The highest SM clock while the tensor cores run (0: clock_ghz). Hopper's rated tensor
  // throughput holds at a lower boost clock than its other pipes; the engine serves the tensor
  // pipe at tensor_flops_per_cycle x tensor_clock_ghz / clock_ghz per cycle of clock_ghz.
  double tensor_clock_ghz = 0;
  double fp32_flops_per_cycle = 0;              // CUDA-core FP32 FLOP per cycle per SM
  double exp_per_cycle = 0;                     // SFU exponentials per cycle per SM
  // A kExp op also holds the tensor pipe for its SFU time, so an SM's exponentials and MMAs do
  // not overlap (true), or the two pipes overlap freely (false, the presets). A hypothesis from
  // the FA-3 paper's figures, opt-in (docs/accuracy.md §5).
  bool sfu_holds_tensor = false;
  // Likewise a kElementwise op holds the tensor pipe for its FP32-pipe time: an SM runs its
  // CUDA-core and tensor-core work one after the other (true), or side by side (false, the
  // presets). A hypothesis from the FA-3 paper's and Triton's public H100 figures, opt-in
  // (docs/accuracy.md §5).
  bool fp32_holds_tensor = false;
  Bytes max_inflight_bytes_per_sm = 0;          // outstanding global-load bytes per SM (Little's law)
  Bytes max_inflight_bytes_per_warp = 0;        // outstanding global-load bytes per warp
  // cp.async leaves the warp at once and its lines wait for load credits in the load/store path
  // (true), or the warp waits until they are issued (false, the default the presets are checked with).
  bool queue_async_copies = false;
  // The bytes an async copy (cp.async, TMA) writes into shared memory occupy the SM's banks as
  // shared-memory wavefronts do, one wavefront per banks x bank width (true), or take no bank
  // time (false, the presets). Opt-in until measured (kernels/cuda/smem_fill.cu; docs/accuracy.md §6).
  bool async_fills_take_banks = false;
  double load_bytes_per_cycle = 0;              // L1/LSU fill bandwidth per SM, bytes/cycle
  MmaFlavours mma;                              // sm.mma: per-flavour tensor rates (absent: tensor_flops_per_cycle)
};

// Software-managed scratchpad devices (TPU-like): no caches, DMA between HBM and SRAM.
struct ScratchpadSpec {
  Bytes sram_bytes_per_core = 0;
  std::uint32_t dma_engines = 0;                // per core
  double dma_bytes_per_cycle = 0;               // per engine
  Cycles dma_latency_cycles = 0;
};

struct DeviceSpec {
  std::string name;                 // preset name, e.g. "h200"
  std::string source_file;          // where it was loaded from
  DeviceKind kind = DeviceKind::kGpu;
  std::uint32_t compute_capability = 90;  // major*10 + minor (GPUs)
  double clock_ghz = 1.0;           // SM clock: converts cycles to seconds
  HbmSpec hbm;
  L2Spec l2;
  SmSpec sm;
  ScratchpadSpec scratchpad;        // meaningful when kind == kScratchpad

  double cycles_to_ns(double cycles) const { return cycles / clock_ghz; }
  // Bytes per SM cycle that a GB/s figure corresponds to.
  double gbps_to_bytes_per_cycle(double gbps) const { return gbps / clock_ghz; }
};

}  // namespace attnsim::core
