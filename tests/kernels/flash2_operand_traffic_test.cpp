// flash2_fwd's shared-memory operand traffic: FA-2's forward (mma.sync with operands loaded by
// ldmatrix, Q not kept in registers) has every warp read all of K_j and V_j, re-reads the Q tile
// each step, and stages O through shared memory; the compute covers whole block_m-row tiles.
// docs/accuracy.md compares the resulting wavefronts with kernels.csv (within 5 % on all nine
// flash_fwd_kernel rows). Both MMA flavours read their shared-memory operands k-slice by k-slice:
// only the first 16-wide slice is waited for before the MMA, the rest overlaps it.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

core::Workload flash2(std::uint64_t seq_q, std::uint64_t seq_kv, std::uint32_t warps) {
  core::Workload w;
  w.kernel = "flash2";
  w.batch = 2;
  w.heads = 3;
  w.seq_q = seq_q;
  w.seq_kv = seq_kv;
  w.head_dim = 64;
  w.block_m = 64;
  w.block_n = 32;
  w.warps = warps;
  return w;
}

TEST(Flash2OperandTraffic, EveryWarpReadsKAndVAndQIsReadEachStep) {
  const core::DeviceSpec dev = config::load_device("h200", {});
  for (std::uint32_t warps : {2u, 4u}) {
    for (std::uint64_t seq_q : {128ull, 1ull}) {  // 1: a decode-shaped launch, one valid row per tile
      const core::Workload w = flash2(seq_q, 256, warps);
      const core::TileProgram p = make_program(w, dev);
      const auto r = engine::simulate(dev, p);
      ASSERT_EQ(r.size(), 1u);
      const std::uint64_t ctas = w.batch * w.heads * core::ceil_div(seq_q, w.block_m);
      const std::uint64_t steps = core::ceil_div(w.seq_kv, w.block_n);
      const std::uint64_t row = w.head_dim * 2;  // fp16
      const auto& smem = r[0].tensors.smem;
      EXPECT_EQ(smem[core::Tensor::kK].read, ctas * steps * warps * w.block_n * row) << warps << " " << seq_q;
      EXPECT_EQ(smem[core::Tensor::kV].read, ctas * steps * warps * w.block_n * row) << warps << " " << seq_q;
      EXPECT_EQ(smem[core::Tensor::kQ].read, ctas * steps * w.block_m * row) << warps << " " << seq_q;
      EXPECT_EQ(smem[core::Tensor::kO].write, ctas * w.block_m * row) << warps << " " << seq_q;
      // Tensor-core work of whole tiles: 2 GEMMs of block_m x block_n x d per step, even when a
      // tile holds a single valid row.
      EXPECT_GE(r[0].totals.stats.flops, static_cast<double>(ctas * steps * 2 * 2 * w.block_m * w.block_n * w.head_dim));
    }
  }
}

// S = Q K_jᵀ of a step, under mma.sync (FA-2) and under wgmma (Triton on sm_90): Q's and K's reads
// are each a first k16 slice the MMA waits for and an async rest read ahead of the MMAs that use it.
TEST(Flash2OperandTraffic, BothMmaFlavoursReadOperandsOneK16SliceAhead) {
  const core::DeviceSpec dev = config::load_device("h200", {});
  for (core::KernelImpl impl : {core::KernelImpl::kFa2, core::KernelImpl::kTriton}) {
    core::Workload w = flash2(128, 256, 4);
    w.impl = impl;
    w.stages = 3;
    const core::TileProgram p = make_program(w, dev);
    std::vector<core::TileOp> ops;
    ASSERT_TRUE(p.launches.at(0)->emit_group_step(0, 0, 2, ops));
    std::vector<const core::TileOp*> reads;
    for (const core::TileOp& op : ops)
      if (op.kind == core::OpKind::kSharedRead && (op.tensor == core::Tensor::kQ || op.tensor == core::Tensor::kK))
        reads.push_back(&op);
    ASSERT_EQ(reads.size(), 4u) << static_cast<int>(impl);
    for (std::size_t i = 0; i < 4; i += 2) {
      const std::uint64_t slices = w.head_dim / 16;
      EXPECT_FALSE(reads[i]->async);
      EXPECT_TRUE(reads[i + 1]->async);
      EXPECT_EQ(reads[i + 1]->bytes(), (slices - 1) * reads[i]->bytes()) << static_cast<int>(impl);
    }
  }
}

}  // namespace
}  // namespace attnsim::kernels
