// FlashAttention Algorithm 1 default block sizes from the on-chip SRAM size M (arXiv 2205.14135).
// Only the published rule; it does not check that the tiles fit (the flash1 factory does).
#pragma once

#include <cstdint>

#include "sim/core/types.h"

namespace attnsim::kernels {

struct Flash1Blocks {
  std::uint64_t b_r = 0;  // query rows per block (inner loop)
  std::uint64_t b_c = 0;  // key/value rows per block (outer loop)
};

// M counts ELEMENTS: M = sram_bytes / bytes_per_value. B_c = ceil(M / (4d)), B_r = min(B_c, d).
// With sram_bytes = 192 KiB, fp16, d = 64 this gives B_c = 384, B_r = 64 (reference/published.md).
Flash1Blocks flash1_block_sizes(core::Bytes sram_bytes, std::uint64_t head_dim, core::Bytes bytes_per_value);

}  // namespace attnsim::kernels
