#include "kernels/block_sizes.h"

#include <algorithm>

namespace attnsim::kernels {

Flash1Blocks flash1_block_sizes(core::Bytes sram_bytes, std::uint64_t head_dim, core::Bytes bytes_per_value) {
  if (head_dim == 0 || bytes_per_value == 0) return {};
  const std::uint64_t m_elements = sram_bytes / bytes_per_value;
  Flash1Blocks b;
  b.b_c = std::max<std::uint64_t>(1, core::ceil_div(m_elements, 4 * head_dim));
  b.b_r = std::min(b.b_c, head_dim);
  return b;
}

core::Bytes flash1_tile_bytes(const Flash1Blocks& b, std::uint64_t head_dim, core::Bytes bytes_per_value,
                              bool backward) {
  return (2 * b.b_c + (backward ? 4 : 2) * b.b_r) * head_dim * bytes_per_value;
}

core::Bytes flash1_largest_fitting_sram(core::Bytes limit, std::uint64_t head_dim, core::Bytes bytes_per_value,
                                        bool backward) {
  if (head_dim == 0 || bytes_per_value == 0) return 0;
  // Tiles are a multiple of d·v: they fit iff 2·B_c + k·B_r <= q.
  const std::uint64_t q = limit / (head_dim * bytes_per_value), k = backward ? 4 : 2;
  std::uint64_t b_c = 0;
  if (q >= k * head_dim + 2 * (head_dim + 1)) {
    b_c = (q - k * head_dim) / 2;  // B_c > d, so B_r = d
  } else {
    b_c = std::min(q / (2 + k), head_dim);  // B_c <= d, so B_r = B_c
  }
  return 4 * head_dim * b_c * bytes_per_value;
}

Flash2Blocks flash2_default_blocks(std::uint64_t head_dim) { return {128, head_dim <= 64 ? 128u : 64u, 4, 2}; }

Flash2Blocks flash2_default_blocks(std::uint64_t head_dim, core::Bytes smem_per_block_optin, core::Bytes smem_per_sm,
                                   core::Bytes bytes_per_value) {
  if (head_dim <= 128) return flash2_default_blocks(head_dim);
  if (head_dim <= 192) return {128, 64, 8, 2};
  const core::Bytes d = head_dim, v = bytes_per_value;
  if (smem_per_block_optin >= v * d * (128 + 2 * 64) && smem_per_sm < 2 * v * d * (64 + 2 * 64)) return {128, 64, 8, 2};
  return {64, 64, 4, 2};
}

Flash2Blocks triton_default_blocks(std::uint64_t head_dim) {
  return {128, head_dim <= 64 ? 64u : 32u, 4, head_dim <= 64 ? 4u : 3u};
}

AttentionBlocks default_attention_blocks(std::string_view kernel, core::Bytes sram_bytes, std::uint64_t head_dim,
                                         core::Bytes bytes_per_value) {
  if (kernel == "flash1") {
    const Flash1Blocks b = flash1_block_sizes(sram_bytes, head_dim, bytes_per_value);
    return {b.b_r, b.b_c, true};
  }
  const Flash2Blocks b = flash2_default_blocks(head_dim);
  return {b.b_r, b.b_c, false};
}

std::string block_size_rule(std::string_view kernel) {
  if (kernel == "flash1")
    return "flash1 blocks: FlashAttention Algorithm 1 with M = on-chip SRAM in elements (sram_bytes / bytes per "
           "value; default the device's shared memory per SM, or the largest M whose tiles fit one CTA): "
           "B_c = ceil(M / 4d), B_r = min(B_c, d); block_m = B_r, block_n = B_c override them";
  if (kernel == "flash2")
    return "flash2 blocks: FlashAttention-2's kernel defaults, B_r = 128 query rows, B_c = 128 key/value rows "
           "(head_dim <= 64) or 64 (head_dim > 64; above 128 FA-2's launch template picks by the device's shared "
           "memory, impl triton the Triton tutorial's tiles: docs/kernels.md), not derived from M; shared memory per CTA = "
           "(B_r + 2 B_c (stages - 1)) d x bytes per value, the larger of B_r, B_c halved until it fits a device "
           "smaller than the library assumes; block_m = B_r, block_n = B_c override them";
  return "";
}

std::string block_size_rule(const core::Workload& resolved) {
  if (resolved.kernel == "flash2" && resolved.num_splits > 1)
    return "flash2 with one query token: FA-2's mha_fwd split the keys " + std::to_string(resolved.num_splits) +
           " ways (num_splits_heuristic), so its split-KV kernel ran (B_c = 256 / 128 / 64 keys for head_dim <= 64 / "
           "<= 128 / larger, 4 warps) and a combine kernel; block_m, block_n, warps, stages, regs_per_thread and "
           "smem_per_cta describe flash_fwd_kernel and do not apply (docs/kernels.md, flash2)";
  return block_size_rule(resolved.kernel);
}

}  // namespace attnsim::kernels
