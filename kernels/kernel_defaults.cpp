#include "kernels/kernel_defaults.h"

#include <algorithm>

#include "sim/core/errors.h"

namespace attnsim::kernels {

namespace {
[[noreturn]] void fail(const std::string& key, const std::string& msg) {
  throw core::ConfigError(core::ConfigProblem{"", 0, key, msg});
}
}  // namespace

core::Workload KernelDefaults::validate_shape(const core::Workload& in) {
  core::Workload w = in;
  if (w.kv_heads == 0) w.kv_heads = w.heads;
  if (w.batch == 0) fail("batch", "must be at least 1");
  if (w.heads == 0) fail("heads", "must be at least 1");
  if (w.seq_q == 0) fail("seq_q", "must be at least 1");
  if (w.seq_kv == 0) fail("seq_kv", "must be at least 1");
  if (w.head_dim == 0) fail("head_dim", "must be at least 1");
  if (w.heads % w.kv_heads != 0)
    fail("kv_heads", "heads (" + std::to_string(w.heads) + ") must be a multiple of kv_heads (" +
                         std::to_string(w.kv_heads) + ")");
  if (w.causal && w.seq_q > w.seq_kv)
    fail("causal", "causal attention needs seq_q <= seq_kv (queries aligned to the last keys)");
  return w;
}

bool KernelDefaults::has_tma(const core::DeviceSpec& device) {
  return device.kind == core::DeviceKind::kGpu && device.compute_capability >= 90;
}

core::Bytes KernelDefaults::smem_limit(const core::DeviceSpec& device) {
  if (device.kind == core::DeviceKind::kScratchpad) return device.scratchpad.sram_bytes_per_core;
  return device.sm.shared_mem_per_block_optin_bytes;
}

core::Bytes KernelDefaults::onchip_sram_per_sm(const core::DeviceSpec& device) {
  if (device.kind == core::DeviceKind::kScratchpad) return device.scratchpad.sram_bytes_per_core;
  return device.sm.l1_shared_total_bytes ? device.sm.l1_shared_total_bytes : device.sm.shared_mem_per_sm_bytes;
}

void KernelDefaults::shrink_to_fit(std::uint64_t& block_m, std::uint64_t& block_n, bool m_free, bool n_free,
                                   const std::function<core::Bytes(std::uint64_t, std::uint64_t)>& need,
                                   const core::DeviceSpec& device, std::uint64_t floor) {
  const core::Bytes limit = smem_limit(device);
  while (need(block_m, block_n) > limit) {
    const bool m_can = m_free && block_m / 2 >= floor, n_can = n_free && block_n / 2 >= floor;
    if (n_can && (!m_can || block_n >= block_m)) block_n /= 2;
    else if (m_can) block_m /= 2;
    else return;  // check_smem reports it
  }
}

void KernelDefaults::check_smem(core::Bytes need, const core::DeviceSpec& device, const std::string& key,
                                const std::string& what) {
  const core::Bytes limit = smem_limit(device);
  if (need > limit)
    fail(key, what + " need " + std::to_string(need) + " B of shared memory per CTA; device '" + device.name +
                  "' allows " + std::to_string(limit) + " B");
}

std::uint32_t KernelDefaults::attention_regs(std::uint64_t rows, std::uint64_t cols, std::uint64_t head_dim,
                                             std::uint32_t threads, const core::DeviceSpec& device) {
  const std::uint64_t acc = core::ceil_div(rows * head_dim + rows * cols, threads);
  const std::uint64_t p16 = core::ceil_div(rows * cols, 2ull * threads);
  std::uint64_t regs = core::ceil_div(acc + p16 + 40, 8) * 8;
  const std::uint64_t cap = device.sm.max_registers_per_thread ? device.sm.max_registers_per_thread : 255;
  return static_cast<std::uint32_t>(std::min(regs, cap));
}

std::uint64_t KernelDefaults::causal_col_blocks(std::uint64_t row0, std::uint64_t rows, std::uint64_t off,
                                                std::uint64_t cols, std::uint64_t div) {
  return std::min(core::ceil_div(cols, div), core::ceil_div(row0 + rows + off, div));
}

std::uint64_t KernelDefaults::causal_first_row(std::uint64_t col0, std::uint64_t off, std::uint64_t div) {
  return col0 > off ? (col0 - off) / div * div : 0;
}

}  // namespace attnsim::kernels
