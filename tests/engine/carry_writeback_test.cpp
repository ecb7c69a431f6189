// l2.carry_writeback: launches back to back, the dirty lines one leaves in the L2 are written back
// on the next launch's HBM channels ahead of its own traffic; bytes stay where they were counted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/device_loader.h"
#include "sim/core/errors.h"
#include "sim/engine/engine.h"
#include "test_launches.h"

namespace attnsim::engine {
namespace {

using core::OpKind;
using testing::load;
using testing::metric;
using testing::ScriptedLaunch;
using testing::simple;
using testing::small_gpu;
using testing::store;

constexpr core::Bytes kPerCta = 64 * 1024;  // 4 CTAs: 256 KiB, a quarter of the 1 MiB L2

// Launch 0 stores 256 KiB (left dirty in the L2); launch 1 reads 256 KiB of another tensor, or
// only computes (`compute_only`).
std::vector<core::KernelResult> run(bool carry, bool compute_only) {
  core::DeviceSpec d = small_gpu();
  d.l2.carry_writeback = carry;
  core::TileProgram p;
  p.launches.push_back(std::make_unique<ScriptedLaunch>(4, 32, 0, [](std::uint64_t cta) {
    return std::vector<core::TileOp>{store(cta * kPerCta, kPerCta / 128, 128, 128)};
  }));
  p.launches.push_back(std::make_unique<ScriptedLaunch>(4, 32, 0, [compute_only](std::uint64_t cta) {
    if (compute_only) return std::vector<core::TileOp>{simple(OpKind::kElementwise, 128 * 2000)};
    return std::vector<core::TileOp>{load((1ull << 30) + cta * kPerCta, kPerCta / 128, 128, 128, false)};
  }));
  return simulate(d, p);
}

TEST(CarryWriteback, TheNextLaunchWaitsForThePreviousWriteBack) {
  const auto off = run(false, false), on = run(true, false);
  // The first launch is the same either way; so are every launch's bytes.
  EXPECT_EQ(metric(on[0], "attnsim__cycles"), metric(off[0], "attnsim__cycles"));
  for (std::size_t i = 0; i < 2; ++i)
    for (const char* m : {"dram__bytes_read.sum", "dram__bytes_write.sum"})
      EXPECT_EQ(metric(on[i], m), metric(off[i], m)) << i << " " << m;
  EXPECT_EQ(metric(on[0], "dram__bytes_write.sum"), 4.0 * kPerCta);  // the final write-back
  // 256 KiB of writes at 256 B/cycle come first: about 1024 cycles more for the reads.
  const double extra = metric(on[1], "attnsim__cycles") - metric(off[1], "attnsim__cycles");
  EXPECT_GT(extra, 0.9 * 1024) << extra;
  EXPECT_LT(extra, 1.1 * 1024) << extra;
}

TEST(CarryWriteback, ALaunchThatTouchesNoDramDoesNotWait) {
  const auto off = run(false, true), on = run(true, true);
  EXPECT_EQ(metric(on[1], "attnsim__cycles"), metric(off[1], "attnsim__cycles"));
}

TEST(CarryWriteback, NeedsTheFinalWriteBackCounted) {
  try {
    config::load_device("h100-sxm", {{"l2.carry_writeback", "true"}, {"l2.count_final_writeback", "false"}});
    ADD_FAILURE() << "accepted";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("carry_writeback: needs count_final_writeback true"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(config::load_device("h100-sxm", {{"l2.carry_writeback", "true"}}).l2.carry_writeback);
}

}  // namespace
}  // namespace attnsim::engine
