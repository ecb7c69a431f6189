// flash2_fwd's shared-memory operand traffic: FA-2's forward (mma.sync with operands loaded by
// ldmatrix, Q not kept in registers) has every warp read all of K_j and V_j, re-reads the Q tile
// each step, and stages O through shared memory; the compute covers whole block_m-row tiles.
// docs/accuracy.md compares the resulting wavefronts with kernels.csv (within 5 % on all nine
// flash_fwd_kernel rows).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace attnsim::kernels
