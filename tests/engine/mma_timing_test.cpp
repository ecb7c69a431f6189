// time_mma: the default flavour keeps the dense-rate timing; a flavour's rate, dtype scale, issue
// cost and latency follow its sm.mma.<flavour> spec; flavours share one tensor pipe.
#include "sim/engine/mma_timing.h"

#include <gtest/gtest.h>

namespace attnsim::engine {
namespace {

core::DeviceSpec device() {
  core::DeviceSpec d;
  d.sm.tensor_flops_per_cycle = 4096;
  d.sm.schedulers_per_sm = 4;
  d.sm.warp_size = 32;
  d.sm.exp_per_cycle = 16;
  d.sm.mma.mma_sync = {true, 2048, 0, 16, 8, 16, 1, 0, 0.5};
  d.sm.mma.wgmma = {true, 4096, 30, 64, 128, 16, 4, 2, 0.5};
  return d;
}

core::TileOp mma(core::MmaFlavour f, std::uint32_t m = 128, std::uint32_t n = 128, std::uint32_t k = 64) {
  core::TileOp op;
  op.kind = core::OpKind::kMma;
  op.m = m, op.n = n, op.k = k;
  op.flavour = f;
  return op;
}

TEST(MmaTiming, DefaultFlavourIsTheDenseRate) {
  const core::DeviceSpec d = device();
  Sm a = Sm::from_spec(d), b = Sm::from_spec(d);
  const double flops = 2.0 * 128 * 128 * 64;
  EXPECT_DOUBLE_EQ(time_mma(a, d.sm, mma(core::MmaFlavour::kDefault), core::DType::kFp16, 100), b.tensor.serve(100, flops));
  // A flavour the device does not describe runs at the dense rate too.
  EXPECT_EQ(mma_flavour_spec(d.sm, core::MmaFlavour::kTcgen05), nullptr);
  Sm c = Sm::from_spec(d);
  EXPECT_DOUBLE_EQ(time_mma(c, d.sm, mma(core::MmaFlavour::kTcgen05), core::DType::kFp16, 0), flops / 4096);
}

TEST(MmaTiming, MmaSyncRunsAtItsRateAndIssuesPerWarp) {
  const core::DeviceSpec d = device();
  Sm sm = Sm::from_spec(d);
  const double flops = 2.0 * 128 * 128 * 64;
  EXPECT_DOUBLE_EQ(time_mma(sm, d.sm, mma(core::MmaFlavour::kMmaSync), core::DType::kFp16, 0), flops / 2048);
  // 512 instructions of one warp each: 16384 thread issues, at 128 per cycle 128 cycles (below the pipe's 1024).
  EXPECT_NEAR(sm.issue.free_at(), 128, 1e-9);
  // The pipe is shared: the next MMA of any flavour queues behind.
  EXPECT_DOUBLE_EQ(time_mma(sm, d.sm, mma(core::MmaFlavour::kDefault), core::DType::kFp16, 0), flops / 2048 + flops / 4096);
}

TEST(MmaTiming, WgmmaScalesWithDtypeAndAddsLatency) {
  const core::DeviceSpec d = device();
  const double flops = 2.0 * 128 * 128 * 64;
  Sm a = Sm::from_spec(d), b = Sm::from_spec(d), c = Sm::from_spec(d);
  EXPECT_DOUBLE_EQ(time_mma(a, d.sm, mma(core::MmaFlavour::kWgmma), core::DType::kFp16, 0), flops / 4096 + 30);
  EXPECT_DOUBLE_EQ(time_mma(b, d.sm, mma(core::MmaFlavour::kWgmma), core::DType::kFp8, 0), flops / 8192 + 30);
  EXPECT_DOUBLE_EQ(time_mma(c, d.sm, mma(core::MmaFlavour::kWgmma), core::DType::kFp32, 0), flops / 2048 + 30);
}

TEST(MmaTiming, TensorClockSlowsEveryFlavourByItsRatio) {
  core::DeviceSpec d = device();
  d.clock_ghz = 2.0;
  d.sm.tensor_clock_ghz = 1.5;  // tensor work rated at 3/4 of the SM clock
  const double flops = 2.0 * 128 * 128 * 64;
  Sm a = Sm::from_spec(d), b = Sm::from_spec(d);
  EXPECT_DOUBLE_EQ(time_mma(a, d.sm, mma(core::MmaFlavour::kDefault), core::DType::kFp16, 0), flops / (4096 * 0.75));
  EXPECT_DOUBLE_EQ(time_mma(b, d.sm, mma(core::MmaFlavour::kMmaSync), core::DType::kFp16, 0), flops / (2048 * 0.75));
  // 0 (no tensor clock named) keeps the SM clock.
  d.sm.tensor_clock_ghz = 0;
  Sm c = Sm::from_spec(d);
  EXPECT_DOUBLE_EQ(time_mma(c, d.sm, mma(core::MmaFlavour::kDefault), core::DType::kFp16, 0), flops / 4096);
}

TEST(MmaTiming, IssueBoundWhenInstructionsAreSmall) {
  core::DeviceSpec d = device();
  d.sm.schedulers_per_sm = 1;  // 32 thread issues per cycle
  d.sm.tensor_flops_per_cycle = 8192;
  d.sm.mma.mma_sync.flops_per_cycle = 8192;  // the pipe alone: 256 cycles
  Sm sm = Sm::from_spec(d);
  const double flops = 2.0 * 128 * 128 * 64;  // 512 m16n8k16 instructions x 32 threads / 32 per cycle = 512 cycles
  EXPECT_DOUBLE_EQ(time_mma(sm, d.sm, mma(core::MmaFlavour::kMmaSync), core::DType::kFp16, 0), 512);
  EXPECT_LT(flops / 8192, 512);
}

}  // namespace
}  // namespace attnsim::engine
