// l2.wait_for_pending_fills: a read that hits a line whose HBM fill is still on its way returns
// when the fill arrives (an MSHR merge), not at the hit latency.
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

// CTA 0 misses a line (HBM latency 100); CTA 1, on another SM at the same time, finds its tag
// and then computes for 200 cycles (12800 FP32 instructions at 64 per cycle).
double cycles(bool wait_for_fills, double* dram) {
  core::DeviceSpec d = small_gpu();
  d.l2.wait_for_pending_fills = wait_for_fills;
  const auto p = program_of(std::make_unique<ScriptedLaunch>(2, 32, 0, [](std::uint64_t cta) {
    std::vector<core::TileOp> ops{load(4096, 1, 128, 0, false)};
    if (cta == 1) ops.push_back(simple(OpKind::kElementwise, 12800));
    return ops;
  }));
  const auto r = simulate(d, p).at(0);
  *dram = metric(r, "dram__bytes_read.sum");
  return metric(r, "attnsim__cycles");
}

TEST(PendingFills, AHitOnALineStillBeingFilledWaitsForTheFill) {
  double dram_off = 0, dram_on = 0;
  const double off = cycles(false, &dram_off), on = cycles(true, &dram_on);
  // Off: CTA 1's hit returns after the near-hit latency (20), so it ends at ~220.
  EXPECT_LT(off, 20 + 200 + 30);
  // On: it returns with CTA 0's fill (~100 + transfer), so it ends at ~300 or later.
  EXPECT_GT(on, 100 + 200);
  EXPECT_EQ(dram_off, 128.0);  // one fill either way: the bytes do not change
  EXPECT_EQ(dram_on, 128.0);
}

}  // namespace
}  // namespace attnsim::engine
