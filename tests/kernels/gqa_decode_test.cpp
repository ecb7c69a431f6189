// GQA decode as FlashAttention-2 runs it: the group's query heads packed into query rows
// (flash_api.cpp's seqlenq_ngroups_swapped), split count from FA-2's num_splits_heuristic.
#include <gtest/gtest.h>

#include "kernels/functional.h"
#include "kernels/registry.h"
#include "sim/core/io_counts.h"
#include "test_device.h"

namespace attnsim::kernels {
namespace {

core::Workload decode(const std::string& kernel, std::uint64_t kv_heads, std::uint64_t seq_kv) {
  core::Workload w;
  w.kernel = kernel;
  w.batch = 8;
  w.heads = 32;
  w.kv_heads = kv_heads;
  w.seq_q = 1;
  w.seq_kv = seq_kv;
  w.head_dim = 128;
  return w;
}

core::DeviceSpec h200_sms() {
  core::DeviceSpec d = testing::small_gpu();
  d.sm.count = 132;
  return d;
}

std::uint64_t ctas(const core::KernelLaunch& l) {
  const core::LaunchShape s = l.shape();
  return s.grid_x * s.grid_y * s.grid_z;
}

// 8 x 32 query heads over 8 KV heads: 64 packed (batch, KV head) rows < 0.8 x 264 slots, so FA-2
// splits; 4 splits give 256 / 264 of a wave, the first count within 85 % of the best. Without
// GQA the 256 (batch, head) rows nearly fill the slots: one split (the measured flash_fwd_kernel).
TEST(GqaDecode, SplitCountFollowsFa2HeuristicOnThePackedShape) {
  for (std::uint64_t n : {4096, 16384, 65536}) {
    const core::TileProgram gqa = make_program(decode("flash_decode", 8, n), h200_sms());
    EXPECT_EQ(gqa.workload.num_splits, 4u) << n;
    EXPECT_EQ(ctas(*gqa.launches[0]), 4u * 8 * 8) << n;  // (split, KV head, batch)
    EXPECT_EQ(ctas(*gqa.launches[1]), 8u * 8) << n;
    const core::TileProgram mha = make_program(decode("flash_decode", 32, n), h200_sms());
    EXPECT_EQ(mha.workload.num_splits, 1u) << n;
    EXPECT_EQ(ctas(*mha.launches[0]), 8u * 32) << n;
  }
  // flash2 follows FA-2's mha_fwd: the packed GQA shape takes 4 splits, so the split-KV pair
  // runs (one split CTA per (split, KV head, batch)); MHA keeps flash_fwd_kernel, one CTA per
  // (batch, head).
  const core::TileProgram f2 = make_program(decode("flash2", 8, 4096), h200_sms());
  ASSERT_EQ(f2.launches.size(), 2u);
  EXPECT_EQ(f2.launches[0]->name(), "flash_decode_split");
  EXPECT_EQ(ctas(*f2.launches[0]), 4u * 8 * 8);
  EXPECT_EQ(f2.workload.num_splits, 4u);
  const core::TileProgram f2mha = make_program(decode("flash2", 32, 4096), h200_sms());
  ASSERT_EQ(f2mha.launches.size(), 1u);
  EXPECT_EQ(f2mha.launches[0]->name(), "flash2_fwd");
  EXPECT_EQ(ctas(*f2mha.launches[0]), 8u * 32);
  EXPECT_EQ(f2mha.workload.num_splits, 0u);
}

// flash2 with one query token runs what FA-2's mha_fwd launches for it: where
// num_splits_heuristic picks more than one split, flash_decode's split-KV pair with FA-2's split
// kernel traits (flash2's tile keys describe flash_fwd_kernel and do not carry over), the same
// CTAs, closed forms and functional schedule; prefill shapes and Triton keep their kernel.
TEST(GqaDecode, Flash2RunsFa2sSplitKvPairWhereItsHeuristicSplits) {
  for (std::uint64_t kv_heads : {8, 1}) {
    core::Workload w = decode("flash2", kv_heads, 16384);
    w.batch = 2;
    w.block_m = 128;  // flash_fwd_kernel's tile, as a sweep of measured launches gives it
    w.block_n = 64;
    w.warps = 4;
    w.stack_frame_bytes = 112;
    const core::TileProgram f2 = make_program(w, h200_sms());
    core::Workload d = decode("flash_decode", kv_heads, 16384);
    d.batch = 2;
    const core::TileProgram dec = make_program(d, h200_sms());
    ASSERT_GT(dec.workload.num_splits, 1u) << kv_heads;
    EXPECT_EQ(f2.workload.num_splits, dec.workload.num_splits) << kv_heads;
    EXPECT_EQ(f2.workload.block_n, dec.workload.block_n) << kv_heads;
    EXPECT_EQ(f2.workload.stack_frame_bytes, 0u) << kv_heads;
    ASSERT_EQ(f2.launches.size(), dec.launches.size()) << kv_heads;
    for (std::size_t i = 0; i < f2.launches.size(); ++i) {
      EXPECT_EQ(f2.launches[i]->name(), dec.launches[i]->name());
      EXPECT_EQ(ctas(*f2.launches[i]), ctas(*dec.launches[i]));
    }
    const auto a = kernels::closed_form_traffic(f2.workload), b = kernels::closed_form_traffic(dec.workload);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].kernel_name, b[i].kernel_name);
      for (std::size_t t = 0; t < core::kNumTensors; ++t) {
        EXPECT_EQ(a[i].traffic[static_cast<core::Tensor>(t)].read, b[i].traffic[static_cast<core::Tensor>(t)].read);
        EXPECT_EQ(a[i].traffic[static_cast<core::Tensor>(t)].write, b[i].traffic[static_cast<core::Tensor>(t)].write);
      }
    }
  }
  // Functional mode runs the split schedule (partials and their combine) on numbers.
  const core::TileProgram small = make_program(decode("flash2", 8, 4096), h200_sms());
  ASSERT_GT(small.workload.num_splits, 1u);
  EXPECT_LT(run_functional(small.workload, Precision::kFp64), 1e-12);
  // What keeps flash_fwd_kernel: more than one query row, Triton's kernel.
  core::Workload prefill = decode("flash2", 8, 4096);
  prefill.seq_q = 2;
  EXPECT_EQ(make_program(prefill, h200_sms()).launches.front()->name(), "flash2_fwd");
  core::Workload triton = decode("flash2", 8, 4096);
  triton.impl = core::KernelImpl::kTriton;
  EXPECT_EQ(make_program(triton, h200_sms()).launches.front()->name(), "flash2_fwd");
}

core::Bytes read_of(const std::vector<core::LaunchTraffic>& t, const std::string& launch, core::Tensor tensor) {
  for (const auto& l : t)
    if (l.kernel_name == launch) return l.traffic[tensor].read;
  ADD_FAILURE() << "no launch " << launch;
  return 0;
}

// With the L2 off K and V reach HBM once per (batch, KV head) (per split), not per query head.
TEST(GqaDecode, ClosedFormsReadKvOncePerKvHead) {
  const core::Bytes kv = 8ull * 8 * 4096 * 128 * 2;  // B x G x N x d x 2 B
  const core::TileProgram dec = make_program(decode("flash_decode", 8, 4096), h200_sms());
  const auto t = kernels::closed_form_traffic(dec.workload);
  EXPECT_EQ(read_of(t, "flash_decode_split", core::Tensor::kK), kv);
  EXPECT_EQ(read_of(t, "flash_decode_split", core::Tensor::kV), kv);
  EXPECT_EQ(read_of(t, "flash_decode_split", core::Tensor::kQ), 8ull * 32 * 4 * 128 * 2);  // per split
  const core::TileProgram f2 = make_program(decode("flash2", 8, 4096), h200_sms());
  EXPECT_EQ(read_of(kernels::closed_form_traffic(f2.workload), "flash_decode_split", core::Tensor::kK), kv);
  // flash_fwd_kernel's packed view (one split, e.g. on a GPU of 16 SMs): K/V once per KV head too.
  core::DeviceSpec few = h200_sms();
  few.sm.count = 16;
  const core::TileProgram one = make_program(decode("flash2", 8, 4096), few);
  EXPECT_EQ(one.workload.num_splits, 0u);
  EXPECT_EQ(read_of(kernels::closed_form_traffic(one.workload), "flash2_fwd", core::Tensor::kK), kv);
  // FA-2 does not swap when head_dim is not a multiple of 8: K/V per query head.
  core::Workload odd = decode("flash2", 8, 4096);
  odd.head_dim = 100;
  const core::TileProgram f2odd = make_program(odd, h200_sms());
  EXPECT_EQ(read_of(kernels::closed_form_traffic(f2odd.workload), "flash2_fwd", core::Tensor::kK),
            8ull * 32 * 4096 * 100 * 2);
}

}  // namespace
}  // namespace attnsim::kernels
