// GQA decode as FlashAttention-2 runs it: the group's query heads packed into query rows
// (flash_api.cpp's seqlenq_ngroups_swapped), split count from FA-2's num_splits_heuristic.
#include <gtest/gtest.h>

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
  // flash2 (flash_fwd_kernel): one CTA per (batch, KV head) holding the 4 query heads as rows.
  EXPECT_EQ(ctas(*make_program(decode("flash2", 8, 4096), h200_sms()).launches[0]), 8u * 8);
  EXPECT_EQ(ctas(*make_program(decode("flash2", 32, 4096), h200_sms()).launches[0]), 8u * 32);
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
  EXPECT_EQ(read_of(kernels::closed_form_traffic(f2.workload), "flash2_fwd", core::Tensor::kK), kv);
  // FA-2 does not swap when head_dim is not a multiple of 8: K/V per query head.
  core::Workload odd = decode("flash2", 8, 4096);
  odd.head_dim = 100;
  const core::TileProgram f2odd = make_program(odd, h200_sms());
  EXPECT_EQ(read_of(kernels::closed_form_traffic(f2odd.workload), "flash2_fwd", core::Tensor::kK),
            8ull * 32 * 4096 * 100 * 2);
}

}  // namespace
}  // namespace attnsim::kernels
