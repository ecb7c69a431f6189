// Default block sizes: flash1's from FlashAttention Algorithm 1 and the on-chip SRAM size M (arXiv
// 2205.14135), with the largest M whose tiles fit a per-CTA shared-memory limit (its fallback);
// flash2's, FlashAttention-2's kernel defaults. One definition for `run` and `formulas`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/core/types.h"
#include "sim/core/workload.h"

namespace attnsim::kernels {

struct Flash1Blocks {
  std::uint64_t b_r = 0;  // query rows per block (inner loop)
  std::uint64_t b_c = 0;  // key/value rows per block (outer loop)
};

// M counts ELEMENTS: M = sram_bytes / bytes_per_value. B_c = ceil(M / (4d)), B_r = min(B_c, d).
// With sram_bytes = 192 KiB, fp16, d = 64 this gives B_c = 384, B_r = 64 (docs/references.md).
Flash1Blocks flash1_block_sizes(core::Bytes sram_bytes, std::uint64_t head_dim, core::Bytes bytes_per_value);

// Shared memory flash1 holds for blocks b: the forward's (Algorithm 1) K_j, V_j, Q_i, O_i,
// (2·B_c + 2·B_r)·d·v; with `backward`, Algorithm 4's K_j, V_j, Q_i, O_i, dO_i, dQ_i,
// (2·B_c + 4·B_r)·d·v (the larger of the two).
core::Bytes flash1_tile_bytes(const Flash1Blocks& b, std::uint64_t head_dim, core::Bytes bytes_per_value,
                              bool backward);

// The largest M (in bytes, = 4·d·B_c·v) whose rule blocks satisfy flash1_tile_bytes <= limit:
// the largest B_c with (2·B_c + k·min(B_c, d))·d·v <= limit, k = 2 (forward) or 4 (backward).
// 0 when not even B_c = 1 fits.
core::Bytes flash1_largest_fitting_sram(core::Bytes limit, std::uint64_t head_dim, core::Bytes bytes_per_value,
                                        bool backward);

// FlashAttention-2's forward kernel defaults (flash_fwd_launch_template.h, sm80 path): B_r = 128
// query rows; B_c = 128 key/value rows for head_dim <= 64, else 64; 4 warps, 2 stages (one K and
// one V buffer). M does not enter.
struct Flash2Blocks {
  std::uint64_t b_r = 0;
  std::uint64_t b_c = 0;
  std::uint32_t warps = 4;
  std::uint32_t stages = 2;
};
Flash2Blocks flash2_default_blocks(std::uint64_t head_dim);
// The same with FA-2's device-dependent rules for large head dims (run_mha_fwd_hdim192 / 256):
// head_dim <= 192 above 128: 128 x 64 with 8 warps; head_dim <= 256: 128 x 64 with 8 warps when a
// block may use 2·d·(128 + 2·64) bytes and an SM has less than 4·d·(64 + 2·64) (A100: one CTA of
// 128 KiB), else 64 x 64 with 4 warps (H100, H200: two CTAs of 96 KiB per SM).
Flash2Blocks flash2_default_blocks(std::uint64_t head_dim, core::Bytes smem_per_block_optin, core::Bytes smem_per_sm,
                                   core::Bytes bytes_per_value);
// The forward configuration of the Triton tutorial's fused attention (06-fused-attention.py,
// Triton 2.x): BLOCK_M 128, BLOCK_N 64 (head_dim <= 64) or 32, num_stages 4 (head_dim <= 64) or
// 3, num_warps 4.
Flash2Blocks triton_default_blocks(std::uint64_t head_dim);

// The default B_r x B_c of a kernel with attention blocks: flash1's from Algorithm 1 and M
// (`from_sram`), otherwise FlashAttention-2's defaults.
struct AttentionBlocks {
  std::uint64_t b_r = 0, b_c = 0;
  bool from_sram = false;
};
AttentionBlocks default_attention_blocks(std::string_view kernel, core::Bytes sram_bytes, std::uint64_t head_dim,
                                         core::Bytes bytes_per_value);

// The rule that sets `kernel`'s block sizes (and M, for flash1), one line of text that both
// `attnsim run` and `attnsim formulas` print; "" for kernels without B_r x B_c blocks.
// The same for a resolved workload: flash2 running FA-2's split-KV pair (num_splits > 1) says so.
std::string block_size_rule(const core::Workload& resolved);
std::string block_size_rule(std::string_view kernel);

}  // namespace attnsim::kernels
