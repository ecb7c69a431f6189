// flash2 impl triton with `tma: true` (the Triton tutorial's tensor-descriptor kernel on sm_90):
// Q, K and V arrive by TMA copies that one warp group issues into mbarrier-guarded stage buffers,
// outside the load credits; the same bytes as the cp.async kernel (closed forms exact with the L2
// off), and the key is refused where it cannot apply.
#include <gtest/gtest.h>

#include <string>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/errors.h"
#include "sim/engine/engine.h"
#include "tests/kernels/closed_form_check.h"

namespace attnsim::kernels {
namespace {

core::Workload triton(std::uint32_t warps, bool tma) {
  core::Workload w;
  w.kernel = "flash2";
  w.impl = core::KernelImpl::kTriton;
  w.batch = 1;
  w.heads = 2;
  w.seq_q = 200;   // ragged: the last row block has 72 of 128 rows
  w.seq_kv = 480;  // ragged: the last K/V block has 32 of 64 rows
  w.head_dim = 64;
  w.block_m = 128;
  w.block_n = 64;
  w.warps = warps;
  w.stages = 3;
  w.tma = tma ? 1 : 0;
  return w;
}

TEST(TritonTma, ClosedFormsExactWithTheL2Off) {
  const core::DeviceSpec dev = config::load_device("h200", {{"l2.capacity_bytes", "0"}});
  for (std::uint32_t warps : {4u, 8u})
    for (bool causal : {false, true})
      for (std::uint32_t stages : {1u, 3u}) {
        core::Workload w = triton(warps, true);
        w.causal = causal;
        w.stages = stages;
        testing::expect_closed_form_bytes(dev, w, std::to_string(warps) + " warps, " + (causal ? "causal, " : "") +
                                                      std::to_string(stages) + " stages");
      }
}

// Warp group 0 issues every copy (the whole Q tile, then each K/V block `stages` - 1 blocks
// ahead), each a bulk copy on its buffer's mbarrier, announced by one arrive that expects the
// copies' bytes; every group waits on the barrier of the block it computes, phase by phase.
TEST(TritonTma, GroupZeroIssuesBulkCopiesThatEveryGroupWaitsFor) {
  const core::DeviceSpec h200 = config::load_device("h200", {});
  const core::TileProgram p = make_program(triton(8, true), h200);
  const core::KernelLaunch& launch = *p.launches.at(0);
  ASSERT_EQ(launch.warp_groups().size(), 2u);
  EXPECT_EQ(launch.mbarriers(), std::vector<std::uint32_t>(1 + 3, 1));
  const std::uint64_t row = 64 * 2, blocks = 8;  // 480 keys in blocks of 64
  for (std::uint32_t g = 0; g < 2; ++g) {
    core::Bytes q = 0, kv = 0, expected = 0;
    std::vector<std::uint64_t> waits;  // (barrier, phase) of every wait, in order
    std::vector<core::TileOp> ops;
    for (std::uint64_t step = 0;; ++step) {
      ops.clear();
      if (!launch.emit_group_step(1, g, step, ops)) break;  // CTA 1: the ragged row block
      for (const core::TileOp& op : ops) {
        if (op.kind == core::OpKind::kLoad) {
          EXPECT_TRUE(op.bulk && op.async) << "step " << step;
          (op.tensor == core::Tensor::kQ ? q : kv) += op.bytes();
        }
        if (op.kind == core::OpKind::kMbarArrive) expected += op.tx_bytes;
        if (op.kind == core::OpKind::kMbarWait) waits.push_back(op.barrier * 100 + op.count);
      }
    }
    EXPECT_EQ(q, g == 0 ? 72 * row : 0) << g;
    EXPECT_EQ(kv, g == 0 ? 2 * 480 * row : 0) << g;
    EXPECT_EQ(expected, q + kv) << g;
    std::vector<std::uint64_t> want{0};  // Q's barrier, phase 0
    for (std::uint64_t j = 0; j < blocks; ++j) want.push_back((1 + j % 3) * 100 + j / 3);
    EXPECT_EQ(waits, want) << g;
  }
}

// With load credits of 128 bytes per warp the cp.async kernel's copies crawl; the TMA kernel's do
// not take credits, so its time barely moves.
TEST(TritonTma, CopiesAreNotHeldByTheLoadCredits) {
  auto cycles = [](bool tma, const char* per_warp) {
    const core::DeviceSpec dev = config::load_device("h200", {{"sm.max_inflight_bytes_per_warp", per_warp}});
    core::Workload w = triton(4, tma);
    w.heads = 8;
    w.seq_q = w.seq_kv = 1024;
    return engine::simulate(dev, make_program(w, dev)).at(0).totals.cycles;
  };
  const double cp_async = cycles(false, "1264"), cp_async_starved = cycles(false, "128");
  const double tma = cycles(true, "1264"), tma_starved = cycles(true, "128");
  EXPECT_GT(cp_async_starved, 2.0 * cp_async);
  EXPECT_LT(tma_starved, 1.01 * tma);
  EXPECT_LT(tma, cp_async);
}

std::string resolve_error(core::Workload w, const std::string& device) {
  try {
    make_program(w, config::load_device(device, {}));
  } catch (const core::ConfigError& e) {
    return e.problems().at(0).key_path + ": " + e.problems().at(0).message;
  }
  return "";
}

TEST(TritonTma, RefusedWithoutTmaOrForFa2) {
  EXPECT_EQ(resolve_error(triton(4, true), "h200"), "");
  EXPECT_NE(resolve_error(triton(4, true), "a100-80gb").find("tma: needs a GPU with TMA"), std::string::npos);
  core::Workload fa2 = triton(4, true);
  fa2.impl = core::KernelImpl::kFa2;
  EXPECT_NE(resolve_error(fa2, "h200").find("tma: FA-2's CUDA kernel"), std::string::npos);
  fa2.tma = 0;  // what FA-2 does anyway
  EXPECT_EQ(resolve_error(fa2, "h200"), "");
  // Unset, impl triton resolves to the cp.async kernel.
  core::Workload unset = triton(4, false);
  unset.tma = -1;
  EXPECT_EQ(make_program(unset, config::load_device("h200", {})).workload.tma, 0);
}

}  // namespace
}  // namespace attnsim::kernels
