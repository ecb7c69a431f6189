// The async-copy pipelines of the GEMM and flash2 (generic `stages`) programs: every MMA runs
// only after the cp.async group holding its operands has been waited for, also when a CTA has
// fewer k-chunks / K-V blocks than pipeline stages (the prologue then commits empty groups), and
// Triton's causal kernel pipelines its two loops (left of the diagonal band, the band) apart.
#include <gtest/gtest.h>

#include <string>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"

namespace attnsim::kernels {
namespace {

// Walks CTA 0's op stream: groups are committed in order and retired oldest first by kWait(n)
// (at most n left in flight). Returns the number of MMAs that ran before the group holding the
// loads of their chunk/block was retired. `mmas_per_group`: MMAs that consume one group.
int early_mmas(const core::KernelLaunch& launch, int mmas_per_group) {
  std::uint64_t committed = 0, retired = 0, mmas = 0;
  int early = 0;
  std::vector<core::TileOp> ops;
  for (std::uint64_t step = 0; launch.emit_step(0, step, ops); ++step) {
    for (const core::TileOp& op : ops) {
      if (op.kind == core::OpKind::kCommit) ++committed;
      if (op.kind == core::OpKind::kWait && committed > op.count) retired = std::max(retired, committed - op.count);
      if (op.kind == core::OpKind::kMma) {
        const std::uint64_t needed = mmas / mmas_per_group + 1;  // groups 0..needed-1 must be done
        if (retired < needed) ++early;
        ++mmas;
      }
    }
    ops.clear();
  }
  EXPECT_GT(mmas, 0u);
  return early;
}

TEST(AsyncPipeline, GemmMmaWaitsForItsChunkAtEveryDepth) {
  // The multistage cp.async GEMM (compute capability 8.x; on 9.0 the GEMMs are warp-specialized,
  // tests/kernels/gemm_ws_test.cpp).
  const core::DeviceSpec dev = config::load_device("h200", {{"compute_capability", "80"}});
  for (std::uint64_t head_dim : {64ull, 128ull, 256ull})  // 1, 2, 4 k-chunks of the QK^T GEMM
    for (std::uint32_t stages : {1u, 2u, 3u, 4u}) {
      core::Workload w;
      w.kernel = "standard";
      w.heads = 1;
      w.seq_q = w.seq_kv = 512;
      w.head_dim = head_dim;
      w.block_m = 128;
      w.block_n = 128;
      w.block_k = 64;
      w.warps = 8;
      w.stages = stages;
      const core::TileProgram p = make_program(w, dev);
      EXPECT_EQ(early_mmas(*p.launches[0], 1), 0) << "d " << head_dim << " stages " << stages;
      EXPECT_EQ(early_mmas(*p.launches[2], 1), 0) << "PV d " << head_dim << " stages " << stages;
    }
}

TEST(AsyncPipeline, Flash2MmaWaitsForItsKvBlockWithMoreStagesThanBlocks) {
  const core::DeviceSpec dev = config::load_device("h200", {});
  for (std::uint64_t seq_kv : {64ull, 128ull, 512ull})  // 1, 2, 8 K/V blocks
    for (std::uint32_t stages : {1u, 3u, 4u}) {
      core::Workload w;
      w.kernel = "flash2";
      w.heads = 1;
      w.seq_q = 128;
      w.seq_kv = seq_kv;
      w.head_dim = 64;
      w.block_m = 64;
      w.block_n = 64;
      w.warps = 4;
      w.stages = stages;
      const core::TileProgram p = make_program(w, dev);
      EXPECT_EQ(early_mmas(*p.launches[0], 2), 0) << "seq_kv " << seq_kv << " stages " << stages;
    }
}

// Triton's causal _attn_fwd: the blocks left of the band (STAGE 1) and the band (STAGE 2) are two
// loops, each software-pipelined on its own: no band block is loaded before the first loop's last
// block has been computed, and every MMA still waits for the group holding its K/V block.
TEST(AsyncPipeline, TritonCausalLoadsTheBandAfterTheBlocksLeftOfIt) {
  const core::DeviceSpec h200 = config::load_device("h200", {});
  core::Workload w;
  w.kernel = "flash2";
  w.impl = core::KernelImpl::kTriton;
  w.causal = true;
  w.batch = 1;
  w.heads = 1;
  w.seq_q = w.seq_kv = 512;
  w.head_dim = 64;
  w.block_m = 128;
  w.block_n = 32;
  w.warps = 4;
  w.stages = 3;
  const core::TileProgram p = make_program(w, h200);
  const core::KernelLaunch& launch = *p.launches.at(0);
  const std::uint64_t cta = 2, band = 2 * 128 / 32, blocks = band + 128 / 32;  // rows 256..383
  std::vector<std::uint64_t> group_of;  // K/V block -> the commit group holding its loads
  std::uint64_t committed = 0, retired = 0, mmas = 0, masks = 0;
  std::vector<core::TileOp> ops;
  for (std::uint64_t step = 0; launch.emit_step(cta, step, ops); ++step) {
    for (const core::TileOp& op : ops) {
      if (op.kind == core::OpKind::kLoad && op.tensor == core::Tensor::kK) {
        if (group_of.size() == band) EXPECT_EQ(mmas, 2 * band) << "band block loaded ahead of the first loop's end";
        group_of.push_back(committed);
      }
      if (op.kind == core::OpKind::kCommit) ++committed;
      if (op.kind == core::OpKind::kWait && committed > op.count) retired = std::max(retired, committed - op.count);
      if (op.kind == core::OpKind::kElementwise && op.count == 2ull * 128 * 32) ++masks;
      if (op.kind == core::OpKind::kMma) {
        const std::uint64_t j = mmas / 2;  // S_j, then P V_j
        ASSERT_LT(j, group_of.size());
        EXPECT_GT(retired, group_of[j]) << "MMA of block " << j << " before its loads were waited for";
        ++mmas;
      }
    }
    ops.clear();
  }
  EXPECT_EQ(group_of.size(), blocks);
  EXPECT_EQ(mmas, 2 * blocks);
  EXPECT_EQ(masks, blocks - band);  // STAGE 2 masks every block of the band
}

}  // namespace
}  // namespace attnsim::kernels
