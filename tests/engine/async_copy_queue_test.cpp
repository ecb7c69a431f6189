// sm.queue_async_copies: cp.async copies wait for load credits in the load/store path while the
// warp group goes on, in order behind each other; a wait on their group still waits for them.
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

// One warp, 256 B in flight, latency 100 and no bandwidth limit: 16 KiB of copies take about
// 64 round trips (~6400 cycles); `compute` FP32 instructions take compute / 64 cycles.
core::DeviceSpec credit_bound_gpu(bool queue) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  d.hbm.bandwidth_gbps = 1e6;
  d.sm.max_inflight_bytes_per_warp = 256;
  d.sm.queue_async_copies = queue;
  return d;
}

double cycles_of(const core::DeviceSpec& d, std::vector<core::TileOp> ops, double* dram = nullptr) {
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 32, 0, [ops](std::uint64_t) { return ops; }));
  const auto r = simulate(d, p).at(0);
  if (dram) *dram = metric(r, "dram__bytes_read.sum");
  return metric(r, "attnsim__cycles");
}

constexpr double kCopyCycles = 64 * 100.0;  // 16 KiB at 256 B per 100-cycle round trip
constexpr std::uint64_t kCompute = 64 * 6000;  // 6000 cycles of the FP32 pipe

TEST(AsyncCopyQueue, QueuedCopiesOverlapTheComputeIssuedAfterThem) {
  const std::vector<core::TileOp> ops{load(0, 1, 16384, 0, true), simple(OpKind::kCommit),
                                      simple(OpKind::kElementwise, kCompute), simple(OpKind::kWait, 0)};
  double dram_blocking = 0, dram_queued = 0;
  const double blocking = cycles_of(credit_bound_gpu(false), ops, &dram_blocking);
  const double queued = cycles_of(credit_bound_gpu(true), ops, &dram_queued);
  // Blocking: the group issues its last line after ~63 round trips, then computes.
  EXPECT_GT(blocking, 0.95 * (kCopyCycles + 6000));
  // Queued: the compute runs while the lines wait for credits; the copy time still holds.
  EXPECT_GT(queued, 0.95 * kCopyCycles);
  EXPECT_LT(queued, 1.1 * kCopyCycles);
  EXPECT_EQ(dram_blocking, 16384.0);
  EXPECT_EQ(dram_queued, 16384.0);
}

TEST(AsyncCopyQueue, WaitingForAnOlderGroupWaitsUntilItsQueuedCopiesAreBack) {
  // Group 0: 16 KiB, still queued when group 1 (one line) is committed; wait_group 1 retires
  // group 0, so the compute after it starts only once all of group 0 is back.
  const std::vector<core::TileOp> ops{load(0, 1, 16384, 0, true),         simple(OpKind::kCommit),
                                      load(1 << 20, 1, 128, 0, true),     simple(OpKind::kCommit),
                                      simple(OpKind::kWait, 1),            simple(OpKind::kElementwise, kCompute),
                                      simple(OpKind::kWait, 0)};
  EXPECT_GT(cycles_of(credit_bound_gpu(true), ops), 0.95 * (kCopyCycles + 6000));
}

TEST(AsyncCopyQueue, ABlockingLoadIssuesAfterTheQueuedCopies) {
  // The load/store path is in order: a blocking load behind 16 KiB of queued copies returns
  // after them, so the compute that needs it starts after the copies.
  const std::vector<core::TileOp> ops{load(0, 1, 16384, 0, true), simple(OpKind::kCommit),
                                      load(1 << 20, 1, 128, 0, false), simple(OpKind::kElementwise, kCompute),
                                      simple(OpKind::kWait, 0)};
  EXPECT_GT(cycles_of(credit_bound_gpu(true), ops), 0.95 * (kCopyCycles + 6000));
}

}  // namespace
}  // namespace attnsim::engine
