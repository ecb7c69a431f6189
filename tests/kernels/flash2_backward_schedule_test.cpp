// FA-2's backward as flash_bwd_launch_template.h launches it: its own tile and 8 warps (not the
// forward's), shared memory from its kernel traits, dQ accumulated by atomic adds.
#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/core/io_counts.h"
#include "test_device.h"

namespace attnsim::kernels {
namespace {

core::Workload fwdbwd(std::uint64_t head_dim) {
  core::Workload w;
  w.kernel = "flash2";
  w.pass = core::Pass::kFwdBwd;
  w.batch = 1;
  w.heads = 2;
  w.seq_q = w.seq_kv = 1024;
  w.head_dim = head_dim;
  w.block_m = 128;  // the forward's measured tile (d = 128)
  w.block_n = 64;
  return w;
}

// d = 128 with >= 144 KiB per block (sm_80, sm_90): Flash_bwd_kernel_traits<128, 64, 128, 8, ...>,
// 3 x 64 x 128 (Q double-buffered, dO) + 2 x 128 x 128 (K, V) + 2 x 64 x 128 (dS, P) values of 2 B.
TEST(Flash2Backward, TileWarpsAndSharedMemoryFollowFa2Traits) {
  const core::TileProgram p = make_program(fwdbwd(128), testing::small_gpu());
  EXPECT_EQ(p.workload.bwd_block_m, 64u);
  EXPECT_EQ(p.workload.bwd_block_n, 128u);
  ASSERT_EQ(p.launches.size(), 4u);
  const core::LaunchShape fwd = p.launches[0]->shape(), bwd = p.launches[2]->shape(), pre = p.launches[1]->shape();
  EXPECT_EQ(fwd.grid_x, 1024u / 128);
  EXPECT_EQ(fwd.threads_per_cta, 128u);
  EXPECT_EQ(bwd.grid_x, 1024u / 128);  // key blocks of 128
  EXPECT_EQ(bwd.threads_per_cta, 256u);
  EXPECT_EQ(bwd.smem_dynamic_bytes, (3u * 64 * 128 + 2u * 128 * 128 + 2u * 64 * 128) * 2);
  EXPECT_EQ(pre.grid_x, 1024u / 64);  // query blocks of the backward's 64 rows
  // Below 144 KiB per block FA-2 takes 64 x 64 with V in registers.
  core::DeviceSpec small = testing::small_gpu();
  small.sm.shared_mem_per_block_optin_bytes = 101376;  // 99 KiB (sm_86)
  const core::TileProgram q = make_program(fwdbwd(128), small);
  EXPECT_EQ(q.workload.bwd_block_n, 64u);
  EXPECT_EQ(q.launches[2]->shape().smem_dynamic_bytes, (3u * 64 * 128 + std::max(2u * 64 * 128, 64u * 128 + 2u * 64 * 64)) * 2);
}

// Q and dO stream once per key block of the backward's tile; dQ_accum is only written (atomicAdd:
// one request per value), once per (query row, key block).
TEST(Flash2Backward, ClosedFormsStreamQueriesPerBackwardKeyBlockAndAddDqAtomically) {
  const core::TileProgram p = make_program(fwdbwd(128), testing::small_gpu());
  const auto t = kernels::closed_form_traffic(p.workload);
  const core::Bytes blocks = 1024 / 128, rows = 2ull * blocks * 1024;
  for (const auto& l : t) {
    if (l.kernel_name != "flash2_bwd") continue;
    EXPECT_EQ(l.traffic[core::Tensor::kQ].read, rows * 128 * 2);
    EXPECT_EQ(l.traffic[core::Tensor::kDO].read, rows * 128 * 2);
    EXPECT_EQ(l.traffic[core::Tensor::kDQAccum].read, 0u);
    EXPECT_EQ(l.traffic[core::Tensor::kDQAccum].write, rows * 128 * 4);
    return;
  }
  ADD_FAILURE() << "no flash2_bwd launch";
}

// GQA / MQA: mha_bwd hands the kernel per-query-head dK and dV (dk_expanded, dv_expanded) and
// then sums each over its group (at::sum_out): two more launches after dQ's conversion, each
// reading the expanded tensor once and writing the KV heads' gradient once; MHA has none.
TEST(Flash2Backward, GqaSumsTheExpandedKeyAndValueGradientsOverEachGroup) {
  core::Workload w = fwdbwd(128);
  w.heads = 8;
  w.kv_heads = 2;
  const core::TileProgram p = make_program(w, testing::small_gpu());
  ASSERT_EQ(p.launches.size(), 6u);
  EXPECT_EQ(p.launches[4]->name(), "flash2_bwd_sum_dk");
  EXPECT_EQ(p.launches[5]->name(), "flash2_bwd_sum_dv");
  const core::LaunchShape sum = p.launches[4]->shape();
  EXPECT_EQ(sum.grid_x * sum.grid_y * sum.grid_z, 2u * 1024 / 8);  // KV heads x 1024 rows / 8 rows per CTA
  const auto t = kernels::closed_form_traffic(p.workload);
  ASSERT_EQ(t.size(), 6u);
  const core::Bytes expanded = 8ull * 1024 * 128 * 2, summed = 2ull * 1024 * 128 * 2;
  EXPECT_EQ(t[4].traffic[core::Tensor::kDK].read, expanded);
  EXPECT_EQ(t[4].traffic[core::Tensor::kDK].write, summed);
  EXPECT_EQ(t[5].traffic[core::Tensor::kDV].read, expanded);
  EXPECT_EQ(t[5].traffic[core::Tensor::kDV].write, summed);
  EXPECT_EQ(t[2].traffic[core::Tensor::kDK].write, expanded);  // the kernel writes every query head's dK
  w.kv_heads = 8;
  EXPECT_EQ(make_program(w, testing::small_gpu()).launches.size(), 4u);
}

}  // namespace
}  // namespace attnsim::kernels
