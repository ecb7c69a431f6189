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

}  // namespace attnsim::kernels
