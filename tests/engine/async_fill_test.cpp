// sm.async_fills_take_banks: the bytes an async copy writes into shared memory occupy the SM's
// banks (one wavefront per banks x bank width), so shared reads beside the copy take longer;
// Nsight Compute's shared-memory wavefront count leaves the fills out either way.
#include <gtest/gtest.h>

#include <vector>

#include "sim/engine/engine.h"
#include "test_launches.h"

namespace attnsim::engine {
namespace {

using core::OpKind;
using testing::load;
using testing::metric;
using testing::program_of;
using testing::ScriptedLaunch;
using testing::simple;
using testing::small_gpu;

// No load credits, the L2 off, HBM bandwidth without limit: the copy costs its latency only.
core::DeviceSpec fill_gpu(bool fills_take_banks) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  d.hbm.bandwidth_gbps = 1e6;
  d.sm.async_fills_take_banks = fills_take_banks;
  return d;
}

core::TileOp shared_read(std::uint32_t rows, std::uint32_t row_bytes) {
  core::TileOp op = simple(OpKind::kSharedRead);
  op.tensor = core::Tensor::kK;
  op.rows = rows;
  op.row_bytes = row_bytes;
  return op;
}

core::KernelResult run(const core::DeviceSpec& d, std::vector<core::TileOp> ops) {
  return simulate(d, program_of(std::make_unique<ScriptedLaunch>(1, 128, 0, [ops](std::uint64_t) { return ops; })))
      .at(0);
}

// 32 KiB copied in (256 wavefronts of 128 B) while 1 MiB is read from shared memory: the reads
// wait behind the fill when it takes the banks.
TEST(AsyncFills, CopiesIntoSharedMemoryOccupyTheBanksWhereTheDeviceSaysSo) {
  const std::vector<core::TileOp> ops{load(0, 256, 128, 128, true), simple(OpKind::kCommit), shared_read(8192, 128),
                                      simple(OpKind::kWait, 0)};
  const auto off = run(fill_gpu(false), ops);
  const auto on = run(fill_gpu(true), ops);
  EXPECT_NEAR(metric(on, "attnsim__cycles") - metric(off, "attnsim__cycles"), 256.0, 2.0);
  EXPECT_NEAR(metric(on, "attnsim__smem_busy_cycles") - metric(off, "attnsim__smem_busy_cycles"), 256.0, 1e-9);
  // The wavefront metric counts shared-memory instructions only, as Nsight Compute does.
  EXPECT_GT(metric(off, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"), 0.0);
  EXPECT_EQ(metric(on, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
            metric(off, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"));
}

// A synchronous load (into registers) writes no shared memory: no bank time either way.
TEST(AsyncFills, LoadsIntoRegistersTakeNoBankTime) {
  const std::vector<core::TileOp> ops{load(0, 256, 128, 128, false), shared_read(8192, 128)};
  EXPECT_EQ(metric(run(fill_gpu(true), ops), "attnsim__cycles"), metric(run(fill_gpu(false), ops), "attnsim__cycles"));
}

}  // namespace
}  // namespace attnsim::engine
