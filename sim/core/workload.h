// A workload: which kernel, on which shapes and tiles. Keys and defaults follow the
// workload contract in docs/cli.md; parsing and validation live in sim/config.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/types.h"

namespace attnsim::core {

enum class Pass : std::uint8_t { kFwd, kFwdBwd };
enum class CtaOrder : std::uint8_t { kRowMajor, kHeadMajor };

struct Workload {
  std::string kernel = "flash2";   // standard, flash1, flash2, flash_decode, pointer_chase, stream_read
  std::uint64_t batch = 1;
  std::uint64_t heads = 1;
  std::uint64_t kv_heads = 0;      // 0 = same as heads (resolved by the loader)
  std::uint64_t seq_q = 1024;
  std::uint64_t seq_kv = 1024;
  std::uint64_t head_dim = 64;
  DType dtype = DType::kFp16;
  bool causal = false;
  Pass pass = Pass::kFwd;
  // Tiles and launch shape; 0 = the kernel's own default (resolved per kernel and device).
  std::uint64_t block_m = 0;
  std::uint64_t block_n = 0;
  std::uint64_t block_k = 0;       // GEMM k-tile (standard)
  std::uint32_t gemm_cluster = 0;  // standard: CTAs per GEMM cluster sharing an operand tile (1, 2); 0 = device's
  std::uint32_t warps = 0;
  std::uint32_t stages = 0;
  CtaOrder cta_order = CtaOrder::kRowMajor;
  std::uint32_t regs_per_thread = 0;   // 0 = kernel's estimate
  Bytes smem_per_cta = 0;              // 0 = kernel's formula
  std::uint32_t stack_frame_bytes = 0; // flash2 forward: local memory per thread (ptxas "bytes stack frame"); 0 = none
  std::uint64_t num_splits = 0;        // flash_decode; 0 = automatic
  Bytes sram_bytes = 0;                // flash1: on-chip SRAM M in bytes for Algorithm 1 block sizes; 0 = device's
  bool functional = false;
  std::uint64_t seed = 1;              // functional mode's random inputs
  // Microbenchmarks.
  Bytes working_set_bytes = 0;     // pointer_chase
  std::uint64_t loads = 0;         // pointer_chase
  std::uint64_t programs = 0;      // stream_read CTAs
  Bytes bytes_per_step = 0;        // stream_read
  Bytes total_bytes = 0;           // stream_read

  Bytes value_bytes() const { return bytes_per_value(dtype); }
  std::uint64_t group_size() const { return kv_heads ? heads / kv_heads : 1; }
};

// Every key a workload (YAML, sweep axis, --set) may name besides device.*, listed once:
// the loaders accept these, the kernels' registry entries name theirs from it. "seq" sets
// seq_q and seq_kv.
const std::vector<std::string_view>& workload_keys();

std::string_view to_string(Pass p);
std::string_view to_string(CtaOrder o);

}  // namespace attnsim::core
