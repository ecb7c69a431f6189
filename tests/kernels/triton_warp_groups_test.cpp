// flash2 impl triton on sm_90 with wgmma and 8 warps: two warp groups of 4 warps, each owning
// block_m / 2 rows of the Q tile with its own op stream (Triton's MMAv3 layout, warps along M),
// meeting at the software pipeline's CTA-wide barriers. The op-stream counts stay those of the
// one-stream CTA, the closed forms stay exact with the L2 off, and one group's softmax overlaps
// the other group's MMAs, which one stream cannot do.
#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/io_counts.h"
#include "sim/engine/engine.h"
#include "tests/kernels/closed_form_check.h"

namespace attnsim::kernels {
namespace {

core::Workload triton(std::uint64_t block_m, std::uint32_t warps) {
  core::Workload w;
  w.kernel = "flash2";
  w.impl = core::KernelImpl::kTriton;
  w.batch = 1;
  w.heads = 2;
  w.seq_q = 200;  // ragged: the last row block has 72 of 128 rows (its second group 8)
  w.seq_kv = 512;
  w.head_dim = 64;
  w.block_m = block_m;
  w.block_n = 64;
  w.warps = warps;
  w.stages = 3;
  return w;
}

std::size_t groups(const core::Workload& w, const core::DeviceSpec& dev) {
  const core::TileProgram p = make_program(w, dev);
  return p.launches.at(0)->warp_groups().size();
}

TEST(TritonWarpGroups, EightWarpsOfWgmmaAreTwoGroupsOfFourWarps) {
  const core::DeviceSpec h200 = config::load_device("h200", {});
  EXPECT_EQ(groups(triton(128, 8), h200), 2u);
  EXPECT_EQ(groups(triton(256, 8), h200), 2u);
  EXPECT_EQ(groups(triton(128, 4), h200), 1u);  // one warp group
  EXPECT_EQ(groups(triton(64, 8), h200), 1u);   // 32 rows per group: Triton splits N, not modelled
  core::Workload fa2 = triton(128, 8);
  fa2.impl = core::KernelImpl::kFa2;  // mma.sync: one stream
  EXPECT_EQ(groups(fa2, h200), 1u);
  EXPECT_EQ(groups(triton(128, 8), config::load_device("a100-80gb", {})), 1u);  // no wgmma before sm_90
  const core::TileProgram p = make_program(triton(128, 8), h200);
  for (const core::WarpGroupSpec& g : p.launches[0]->warp_groups()) EXPECT_EQ(g.warps, 4u);
}

// Each group loads its own rows of Q and stores its own rows of O; their K/V shares add up to
// every block; every MMA is block_m / 2 rows.
TEST(TritonWarpGroups, EachGroupLoadsAndStoresItsOwnRows) {
  const core::DeviceSpec h200 = config::load_device("h200", {});
  const core::TileProgram p = make_program(triton(128, 8), h200);
  const core::KernelLaunch& launch = *p.launches[0];
  const std::uint64_t row = 64 * 2;  // d 64, fp16
  for (std::uint64_t cta : {0ull, 1ull}) {  // a full row block, the ragged one (72 rows)
    const std::uint64_t valid = cta == 0 ? 128 : 72;
    core::Bytes q = 0, o = 0, k = 0, v = 0;
    std::vector<core::TileOp> ops;
    for (std::uint32_t g = 0; g < 2; ++g) {
      core::Bytes q_g = 0;
      for (std::uint64_t step = 0;; ++step) {
        ops.clear();
        if (!launch.emit_group_step(cta, g, step, ops)) break;
        for (const core::TileOp& op : ops) {
          const core::Bytes b = op.rows * op.row_bytes;
          if (op.kind == core::OpKind::kLoad && op.tensor == core::Tensor::kQ) q_g += b;
          if (op.kind == core::OpKind::kStore && op.tensor == core::Tensor::kO) o += b;
          if (op.kind == core::OpKind::kLoad && op.tensor == core::Tensor::kK) k += b;
          if (op.kind == core::OpKind::kLoad && op.tensor == core::Tensor::kV) v += b;
          if (op.kind == core::OpKind::kMma) {
            EXPECT_EQ(op.m, 64u);
          }
        }
      }
      EXPECT_EQ(q_g, std::min<std::uint64_t>(64, valid - std::min<std::uint64_t>(valid, 64 * g)) * row) << cta << " " << g;
      q += q_g;
    }
    EXPECT_EQ(q, valid * row);
    EXPECT_EQ(o, valid * row);
    EXPECT_EQ(k, 512 * row);
    EXPECT_EQ(v, 512 * row);
  }
}

// With the L2 off the HBM bytes are the closed forms, causal and with the backward too.
TEST(TritonWarpGroups, ClosedFormsExactWithTheL2Off) {
  const core::DeviceSpec dev = config::load_device("h200", {{"l2.capacity_bytes", "0"}});
  for (bool causal : {false, true})
    for (auto pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
      core::Workload w = triton(128, 8);
      w.causal = causal;
      w.pass = pass;
      testing::expect_closed_form_bytes(dev, w, std::string(causal ? "causal " : "") + std::string(core::to_string(pass)));
    }
}

// One CTA on one SM, its loads not held back by the load credits (so that the SM's pipes, not the
// loads, set its time). In one stream (4 warps) the tensor pipe, the SFU and the shared-memory
// reads take turns; with two groups (8 warps: the same MMAs and exponentials, each K/V block read
// from shared memory once per group) one group's softmax runs while the other's MMAs do. As one
// stream the 8-warp CTA took 187,727 cycles against 171,343 for 4 warps (its operand reads are
// twice those of one group); as two groups 122,067.
TEST(TritonWarpGroups, OneGroupsSoftmaxOverlapsTheOtherGroupsMmas) {
  const core::DeviceSpec h200 = config::load_device(
      "h200", {{"sm.max_inflight_bytes_per_warp", "1048576"}, {"sm.max_inflight_bytes_per_sm", "8388608"}});
  auto run = [&](std::uint32_t warps) {
    core::Workload w = triton(128, warps);
    w.heads = 1;
    w.seq_q = 128;  // one CTA
    w.seq_kv = 4096;
    w.head_dim = 128;
    const core::TileProgram p = make_program(w, h200);
    return engine::simulate(h200, p).at(0).totals;
  };
  const core::LaunchTotals one = run(4), two = run(8);
  EXPECT_GE(one.cycles, one.busy.tensor + one.busy.sfu + one.busy.smem);  // serial
  EXPECT_LT(two.cycles, 0.8 * one.cycles);
  EXPECT_GE(two.busy.smem, one.busy.smem);
  EXPECT_DOUBLE_EQ(two.stats.mma_flops, one.stats.mma_flops);
  EXPECT_DOUBLE_EQ(two.stats.exp_ops, one.stats.exp_ops);
}

}  // namespace
}  // namespace attnsim::kernels
