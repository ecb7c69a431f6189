// FlashAttention Algorithm 1 default block sizes from the on-chip SRAM size M (arXiv 2205.14135),
// and the largest M whose tiles fit a per-CTA shared-memory limit (the flash1 default's fallback).
#pragma once

#include <cstdint>

#include "sim/core/types.h"

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

}  // namespace attnsim::kernels
