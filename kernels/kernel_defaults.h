// Checks and default formulas the attention kernels share: shape validation, the shared-memory
// limit per CTA, the register estimate, the causal block ranges. Numbers documented in docs/kernels.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sim/core/device_spec.h"
#include "sim/core/workload.h"

namespace attnsim::kernels {

class KernelDefaults {
 public:
  // Throws ConfigError for zero sizes, heads % kv_heads != 0, causal with seq_q > seq_kv.
  // Returns the workload with kv_heads resolved.
  static core::Workload validate_shape(const core::Workload& w);

  // The most shared memory one CTA may use: opt-in limit per block (GPU) or SRAM per core.
  static core::Bytes smem_limit(const core::DeviceSpec& device);

  // Whether the device has the Tensor Memory Accelerator: a GPU of compute capability 9.0 or later.
  static bool has_tma(const core::DeviceSpec& device);

  // On-chip SRAM per SM as FlashAttention defines its M (arXiv 2205.14135 §2.1: the A100 has
  // "192 KB of on-chip SRAM per each of 108 SMs"): the unified L1 / shared-memory storage,
  // sm.l1_shared_total_bytes (shared_mem_per_sm_bytes where a device leaves it 0), or the SRAM
  // per core of a scratchpad device. On a GPU one CTA can allocate less than this (smem_limit).
  static core::Bytes onchip_sram_per_sm(const core::DeviceSpec& device);

  // Tiles a kernel chose itself (the user set neither side) on a device whose per-block shared
  // memory is smaller than the library's tile assumes (the teaching preset): halves the larger of
  // the free sides (`m_free`, `n_free`; block_n on a tie) until need(block_m, block_n) fits
  // smem_limit(device) or no free side is above `floor`. FA-2's backward does the same
  // (flash2.cpp, fitting_bwd_traits).
  static void shrink_to_fit(std::uint64_t& block_m, std::uint64_t& block_n, bool m_free, bool n_free,
                            const std::function<core::Bytes(std::uint64_t, std::uint64_t)>& need,
                            const core::DeviceSpec& device, std::uint64_t floor = 16);
  // Throws ConfigError naming `key` when `need` exceeds smem_limit(device).
  static void check_smem(core::Bytes need, const core::DeviceSpec& device, const std::string& key,
                         const std::string& what);

  // Registers per thread for an attention CTA holding fp32 accumulators O (rows x d) and
  // S (rows x cols) plus P in 16-bit, spread over `threads`, plus 40 for addresses and
  // indices; rounded up to 8, capped at the device's per-thread maximum.
  static std::uint32_t attention_regs(std::uint64_t rows, std::uint64_t cols, std::uint64_t head_dim,
                                      std::uint32_t threads, const core::DeviceSpec& device);

  // Causal (bottom-right aligned, off = seq_kv - seq_q): for the row block [row0, row0+rows),
  // the number of `div`-sized column blocks it needs, capped at ceil(cols/div).
  static std::uint64_t causal_col_blocks(std::uint64_t row0, std::uint64_t rows, std::uint64_t off,
                                         std::uint64_t cols, std::uint64_t div);
  // Causal: for the column block starting at col0, the first `div`-aligned row it is seen from.
  static std::uint64_t causal_first_row(std::uint64_t col0, std::uint64_t off, std::uint64_t div);
};

}  // namespace attnsim::kernels
