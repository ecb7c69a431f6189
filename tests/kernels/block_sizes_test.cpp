// FlashAttention Algorithm 1 block sizes (arXiv 2205.14135) against docs/references.md, and
// flash1's default M: the on-chip SRAM per SM, or the largest M whose tiles fit one CTA.
#include "kernels/block_sizes.h"

#include <gtest/gtest.h>

#include "kernels/kernel_defaults.h"
#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/errors.h"

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

TEST(Flash1BlockSizes, TileBytesOfForwardAndBackward) {
  // 64 x 384 blocks, d = 64, fp16: forward (768 + 128)·64·2, backward (768 + 256)·64·2.
  EXPECT_EQ(flash1_tile_bytes({64, 384}, 64, 2, false), 114688u);
  EXPECT_EQ(flash1_tile_bytes({64, 384}, 64, 2, true), 131072u);
}

TEST(Flash1BlockSizes, LargestFittingSramIsTheLargestWhoseTilesFit) {
  for (core::Bytes limit : {1000u, 16384u, 65536u, 99999u, 166912u, 232448u})
    for (std::uint64_t d : {16u, 64u, 128u, 256u})
      for (core::Bytes v : {2u, 4u})
        for (bool backward : {false, true}) {
          const core::Bytes m = flash1_largest_fitting_sram(limit, d, v, backward);
          const std::string what = std::to_string(limit) + " B, d " + std::to_string(d) + ", v " + std::to_string(v) +
                                   (backward ? ", backward" : ", forward");
          if (m == 0) {  // not even B_c = B_r = 1 fits
            EXPECT_GT(flash1_tile_bytes({1, 1}, d, v, backward), limit) << what;
            continue;
          }
          const Flash1Blocks b = flash1_block_sizes(m, d, v);
          EXPECT_EQ(m, 4 * d * b.b_c * v) << what;  // the largest M giving this B_c
          EXPECT_LE(flash1_tile_bytes(b, d, v, backward), limit) << what;
          EXPECT_GT(flash1_tile_bytes(flash1_block_sizes(m + v, d, v), d, v, backward), limit) << what;
        }
}

core::Workload gpt2_medium(std::uint64_t head_dim, core::Pass pass) {
  core::Workload w;
  w.kernel = "flash1";
  w.batch = 64;
  w.heads = 16;
  w.seq_q = w.seq_kv = 1024;
  w.head_dim = head_dim;
  w.dtype = core::DType::kFp16;
  w.pass = pass;
  return w;
}

TEST(Flash1Defaults, A100TakesThePapers192KiBOfSramPerSm) {
  // published.md: 192 KB of on-chip SRAM per SM; B_c = 384, B_r = 64 for GPT-2 medium.
  const auto device = config::load_device("a100-40gb");
  EXPECT_EQ(KernelDefaults::onchip_sram_per_sm(device), 196608u);
  const auto p = make_program(gpt2_medium(64, core::Pass::kFwdBwd), device);
  EXPECT_EQ(p.workload.sram_bytes, 196608u);
  EXPECT_EQ(p.workload.block_n, 384u);
  EXPECT_EQ(p.workload.block_m, 64u);
  EXPECT_EQ(p.workload.smem_per_cta, 114688u);  // fits the 163 KiB a CTA may allocate
}

TEST(Flash1Defaults, FallsBackToLargestFittingSramWhenThePapersTilesDoNotFit) {
  // d = 128 on the A100: M = 192 KiB gives B_c = 192, B_r = 128; the forward's tiles
  // (384 + 256)·128·2 = 160 KiB fit the 163 KiB per block, Algorithm 4's (384 + 512)·128·2 =
  // 224 KiB do not. fwdbwd falls back to the largest B_c whose backward tiles fit: (2·B_c +
  // 4·B_c)·256 <= 166912 -> B_c = 108, M = 4·128·108·2 = 110592 B.
  const auto device = config::load_device("a100-40gb");
  const auto fwd = make_program(gpt2_medium(128, core::Pass::kFwd), device);
  EXPECT_EQ(fwd.workload.sram_bytes, 196608u);
  EXPECT_EQ(fwd.workload.block_n, 192u);
  EXPECT_EQ(fwd.workload.block_m, 128u);
  const auto both = make_program(gpt2_medium(128, core::Pass::kFwdBwd), device);
  EXPECT_EQ(both.workload.sram_bytes, 110592u);
  EXPECT_EQ(both.workload.block_n, 108u);
  EXPECT_EQ(both.workload.block_m, 108u);
}

TEST(Flash1Defaults, ExplicitSramWhoseTilesDoNotFitIsAnError) {
  core::Workload w = gpt2_medium(64, core::Pass::kFwd);
  w.sram_bytes = 512 * 1024;  // B_c = 1024: (2048 + 128)·64·2 = 272 KiB > 163 KiB
  try {
    make_program(w, config::load_device("a100-40gb"));
    FAIL() << "expected a ConfigError";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sram_bytes"), std::string::npos) << e.what();
  }
}

TEST(Flash1Defaults, EveryPresetGetsTilesThatFit) {
  for (const std::string& name : config::device_preset_names()) {
    const auto device = config::load_device(name);
    for (std::uint64_t d : {64u, 128u})
      for (core::Pass pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
        const std::string what = name + " d " + std::to_string(d) + (pass == core::Pass::kFwdBwd ? " fwdbwd" : " fwd");
        core::TileProgram p;
        ASSERT_NO_THROW(p = make_program(gpt2_medium(d, pass), device)) << what;
        const Flash1Blocks b{p.workload.block_m, p.workload.block_n};
        EXPECT_LE(flash1_tile_bytes(b, d, 2, pass == core::Pass::kFwdBwd), KernelDefaults::smem_limit(device)) << what;
        EXPECT_LE(p.workload.sram_bytes, KernelDefaults::onchip_sram_per_sm(device)) << what;
      }
  }
}

}  // namespace
}  // namespace attnsim::kernels
