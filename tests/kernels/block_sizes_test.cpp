// FlashAttention Algorithm 1 block sizes (arXiv 2205.14135) against reference/published.md.
#include <gtest/gtest.h>

#include "kernels/block_sizes.h"

namespace attnsim::kernels {
namespace {

TEST(Flash1BlockSizes, Gpt2MediumWith192KiBInFp16Gives384By64) {
  const Flash1Blocks b = flash1_block_sizes(192 * 1024, 64, 2);
  EXPECT_EQ(b.b_c, 384u);
  EXPECT_EQ(b.b_r, 64u);
}

TEST(Flash1BlockSizes, CeilingAndMinWithHeadDim) {
  // M = 1000 elements (fp32, 4000 B), d = 16: B_c = ceil(1000/64) = 16, B_r = min(16, 16).
  const Flash1Blocks b = flash1_block_sizes(4000, 16, 4);
  EXPECT_EQ(b.b_c, 16u);
  EXPECT_EQ(b.b_r, 16u);
  // d = 128, M = 65536 elements: B_c = 128, B_r = min(128, 128) = 128; M = 16384: B_c = 32, B_r = 32.
  EXPECT_EQ(flash1_block_sizes(131072, 128, 2).b_r, 128u);
  EXPECT_EQ(flash1_block_sizes(32768, 128, 2).b_r, 32u);
}

}  // namespace
}  // namespace attnsim::kernels
