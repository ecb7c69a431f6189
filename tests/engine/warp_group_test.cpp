// Warp-specialized CTAs on toy launches: mbarrier waits on transaction bytes, a producer /
// consumer ring over stages, async MMA groups, named barriers, register budgets, and thread-block
// clusters (co-scheduling, TMA multicast read once). Each test fails if its mechanism is missing.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/errors.h"
#include "sim/engine/engine.h"
#include "test_launches.h"

namespace attnsim::engine {
namespace {

using core::OpKind;
using core::TileOp;
using testing::metric;
using testing::program_of;
using testing::small_gpu;

// A launch whose CTAs are warp groups replaying fixed ops (one step each).
class GroupedLaunch : public core::KernelLaunch {
 public:
  using Script = std::function<std::vector<TileOp>(std::uint64_t cta, std::uint32_t group)>;
  GroupedLaunch(std::uint64_t ctas, std::vector<core::WarpGroupSpec> groups, std::vector<std::uint32_t> mbars,
                Script s, std::uint32_t cluster = 1, core::Bytes smem = 0)
      : ctas_(ctas), groups_(std::move(groups)), mbars_(std::move(mbars)), script_(std::move(s)), cluster_(cluster),
        smem_(smem) {}
  std::string name() const override { return "grouped"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = ctas_;
    std::uint32_t warps = 0;
    for (const auto& g : groups_) warps += g.warps;
    s.threads_per_cta = warps * 32;
    s.regs_per_thread = 64;
    s.smem_dynamic_bytes = smem_;
    s.cluster_size = cluster_;
    return s;
  }
  std::vector<core::WarpGroupSpec> warp_groups() const override { return groups_; }
  std::vector<std::uint32_t> mbarriers() const override { return mbars_; }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    return emit_group_step(cta, 0, step, out);
  }
  bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                       std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    out = script_(cta, group);
    return true;
  }

 private:
  std::uint64_t ctas_;
  std::vector<core::WarpGroupSpec> groups_;
  std::vector<std::uint32_t> mbars_;
  Script script_;
  std::uint32_t cluster_;
  core::Bytes smem_;
};

const core::WarpGroupSpec kProducer{core::WarpRole::kProducer, 4, 0};
const core::WarpGroupSpec kConsumer{core::WarpRole::kConsumer, 4, 0};

TileOp op(OpKind k, std::uint64_t count = 0) {
  TileOp o;
  o.kind = k;
  o.count = count;
  return o;
}
TileOp arrive(std::uint8_t bar, std::uint32_t tx = 0, std::uint8_t multicast = 0) {
  TileOp o = op(OpKind::kMbarArrive, 1);
  o.barrier = bar;
  o.tx_bytes = tx;
  o.multicast = multicast;
  return o;
}
TileOp mbar_wait(std::uint8_t bar, std::uint64_t phase) {
  TileOp o = op(OpKind::kMbarWait, phase);
  o.barrier = bar;
  return o;
}
// A TMA bulk load of rows x 256 B (contiguous) completing on mbarrier `bar`.
TileOp tma(core::Bytes addr, std::uint32_t rows, std::uint8_t bar, std::uint8_t multicast = 0) {
  TileOp o = testing::load(addr, rows, 256, 256, true);
  o.bulk = true;
  o.barrier = bar;
  o.multicast = multicast;
  return o;
}
// An MMA of `cycles` cycles on small_gpu's tensor pipe (1024 FLOP / cycle).
TileOp mma(std::uint32_t cycles, bool async = false) {
  TileOp o;
  o.kind = OpKind::kMma;
  o.m = cycles, o.n = 16, o.k = 32;
  o.async = async;
  o.flavour = async ? core::MmaFlavour::kWgmma : core::MmaFlavour::kDefault;
  return o;
}
TileOp named(OpKind k, std::uint8_t id, std::uint64_t threads) {
  TileOp o = op(k, threads);
  o.barrier = id;
  return o;
}

double cycles(const core::DeviceSpec& d, std::unique_ptr<core::KernelLaunch> l) {
  return simulate(d, program_of(std::move(l))).at(0).totals.cycles;
}

TEST(WarpGroups, MbarrierWaitReturnsOnlyAfterTheTransactionBytesArrived) {
  const core::DeviceSpec d = small_gpu();
  // The load alone, synchronous: when its bytes are back.
  const double load_time = cycles(d, std::make_unique<testing::ScriptedLaunch>(1, 128, 0, [](std::uint64_t) {
    return std::vector<TileOp>{testing::load(0, 64, 256, 256, false)};
  }));
  ASSERT_GT(load_time, 100);  // HBM latency 100 cycles
  // Producer: expect 16 KiB on mbarrier 0, issue the TMA load; consumer: wait, then a 300-cycle MMA.
  auto run = [&](bool wait) {
    return cycles(d, std::make_unique<GroupedLaunch>(1, std::vector{kProducer, kConsumer}, std::vector<std::uint32_t>{1},
                                                     [wait](std::uint64_t, std::uint32_t g) {
                                                       if (g == 0) return std::vector<TileOp>{arrive(0, 64 * 256), tma(0, 64, 0)};
                                                       std::vector<TileOp> ops;
                                                       if (wait) ops.push_back(mbar_wait(0, 0));
                                                       ops.push_back(mma(300));
                                                       return ops;
                                                     }));
  };
  EXPECT_NEAR(run(true), load_time + 300, 2);
  EXPECT_NEAR(run(false), std::max(load_time, 300.0), 2);
}

TEST(WarpGroups, MbarrierPhaseNeedsAllItsBytesNotJustTheArrival) {
  // The producer expects 32 KiB but loads 16 KiB: the phase never completes, the consumer never
  // returns, and the engine reports the deadlock instead of finishing.
  auto l = std::make_unique<GroupedLaunch>(1, std::vector{kProducer, kConsumer}, std::vector<std::uint32_t>{1},
                                           [](std::uint64_t, std::uint32_t g) {
                                             if (g == 0) return std::vector<TileOp>{arrive(0, 2 * 64 * 256), tma(0, 64, 0)};
                                             return std::vector<TileOp>{mbar_wait(0, 0), mma(10)};
                                           });
  EngineOptions quick;
  quick.stall_limit_events = 10'000;
  EXPECT_THROW(simulate(small_gpu(), program_of(std::move(l)), quick), core::SimError);
}

// A producer group streams `chunks` TMA loads of 16 KiB into a ring of `stages` buffers (mbarriers
// full[s] = s, empty[s] = stages + s); a consumer group waits for each, runs an MMA of `mma_cycles`
// and releases the buffer.
std::unique_ptr<core::KernelLaunch> ring(std::uint32_t stages, std::uint32_t chunks, std::uint32_t mma_cycles) {
  std::vector<std::uint32_t> bars(2 * stages, 1);
  return std::make_unique<GroupedLaunch>(
      1, std::vector{kProducer, kConsumer}, bars, [=](std::uint64_t, std::uint32_t g) {
        std::vector<TileOp> ops;
        for (std::uint32_t c = 0; c < chunks; ++c) {
          const auto s = static_cast<std::uint8_t>(c % stages);
          const auto empty = static_cast<std::uint8_t>(stages + s);
          if (g == 0) {
            if (c >= stages) ops.push_back(mbar_wait(empty, c / stages - 1));
            ops.push_back(arrive(s, 64 * 256));
            ops.push_back(tma(static_cast<core::Bytes>(c) * 64 * 256, 64, s));
          } else {
            ops.push_back(mbar_wait(s, c / stages));
            ops.push_back(mma(mma_cycles));
            ops.push_back(arrive(empty));
          }
        }
        return ops;
      });
}

TEST(WarpGroups, ProducerConsumerRingGetsFasterWithStagesUntilTheTensorBound) {
  const core::DeviceSpec d = small_gpu();
  const std::uint32_t chunks = 64, mma_cycles = 128;
  const double t1 = cycles(d, ring(1, chunks, mma_cycles));
  const double t2 = cycles(d, ring(2, chunks, mma_cycles));
  const double t4 = cycles(d, ring(4, chunks, mma_cycles));
  const double t8 = cycles(d, ring(8, chunks, mma_cycles));
  // One stage: load latency and MMA in series.
  EXPECT_GT(t1, 1.5 * chunks * mma_cycles);
  EXPECT_LT(t2, t1);
  EXPECT_LE(t4, t2);
  // Deep enough, the tensor pipe is the bound (chunks x mma_cycles) plus the first load.
  EXPECT_LE(t8, t4);
  EXPECT_GE(t8, chunks * mma_cycles);
  EXPECT_LT(t8, chunks * mma_cycles + 400);
}

TEST(WarpGroups, MemoryBoundRingGetsFasterWithStagesUntilTheHbmBandwidth) {
  // 64 chunks x 16 KiB through 256 B / cycle of HBM: 4096 cycles at least, whatever the stages;
  // with two stages the 100-cycle latency is not hidden yet.
  const core::DeviceSpec d = small_gpu();
  const double t2 = cycles(d, ring(2, 64, 8)), t8 = cycles(d, ring(8, 64, 8));
  EXPECT_LT(t8, 0.9 * t2);
  EXPECT_GE(t8, 64.0 * 64 * 256 / 256);
  EXPECT_LT(t8, 1.1 * 64.0 * 64 * 256 / 256);
}

// Two consumer groups, each alternating an MMA and exponentials, against one group doing both
// in order: the shared tensor pipe is busier (the SFU work of one overlaps the MMA of the other).
TEST(WarpGroups, TwoConsumerGroupsOverlapSoftmaxWithTheOtherGroupsMma) {
  const core::DeviceSpec d = small_gpu();
  const std::uint32_t tiles = 16;
  auto work = [](std::uint32_t n, bool async) {
    std::vector<TileOp> ops;
    for (std::uint32_t i = 0; i < n; ++i) {
      ops.push_back(mma(200, async));
      if (async) ops.push_back(op(OpKind::kMmaCommit));
      if (async) ops.push_back(op(OpKind::kMmaWait, 0));
      ops.push_back(op(OpKind::kExp, 16 * 200));  // 200 cycles on the SFU
    }
    return ops;
  };
  const auto one = simulate(d, program_of(std::make_unique<GroupedLaunch>(
                                   1, std::vector{core::WarpGroupSpec{core::WarpRole::kConsumer, 8, 0}},
                                   std::vector<std::uint32_t>{}, [&](std::uint64_t, std::uint32_t) { return work(tiles, false); })));
  const auto two = simulate(d, program_of(std::make_unique<GroupedLaunch>(
                                   1, std::vector{kConsumer, kConsumer}, std::vector<std::uint32_t>{},
                                   [&](std::uint64_t, std::uint32_t) { return work(tiles / 2, true); })));
  EXPECT_NEAR(one.at(0).totals.cycles, tiles * 400.0, 2);
  EXPECT_LT(two.at(0).totals.cycles, tiles * 250.0);
  auto tensor_busy = [](const core::KernelResult& r) { return r.totals.busy.tensor / r.totals.cycles; };
  EXPECT_NEAR(tensor_busy(one.at(0)), 0.5, 0.01);
  EXPECT_GT(tensor_busy(two.at(0)), 1.5 * tensor_busy(one.at(0)));
}

// sm.sfu_holds_tensor (the h100-sxm and h200 presets): an async MMA and exponentials issued
// beside it no longer overlap; the tensor pipe is held for the SFU time, in FIFO order.
TEST(WarpGroups, SfuHoldsTheTensorPipeWhereTheDeviceSaysSo) {
  core::DeviceSpec d = small_gpu();
  auto run = [&](const core::DeviceSpec& dev, std::vector<TileOp> ops) {
    return cycles(dev, std::make_unique<GroupedLaunch>(1, std::vector{kConsumer}, std::vector<std::uint32_t>{},
                                                       [ops](std::uint64_t, std::uint32_t) { return ops; }));
  };
  const std::vector<TileOp> async = {mma(500, true), op(OpKind::kMmaCommit), op(OpKind::kExp, 16 * 300),
                                     op(OpKind::kMmaWait, 0)};
  EXPECT_NEAR(run(d, async), 500, 1);
  d.sm.sfu_holds_tensor = true;
  EXPECT_NEAR(run(d, async), 800, 1);  // the exponentials wait for the MMA queued before them
  EXPECT_NEAR(run(d, {mma(500), op(OpKind::kExp, 16 * 300)}), 800, 1);  // in series anyway
  // Two groups, one all MMAs, one all exponentials: side by side without the hold, in turn with it.
  auto pair = [&](const core::DeviceSpec& dev) {
    return cycles(dev, std::make_unique<GroupedLaunch>(
                           1, std::vector{kConsumer, kConsumer}, std::vector<std::uint32_t>{},
                           [](std::uint64_t, std::uint32_t g) {
                             return g == 0 ? std::vector<TileOp>{mma(400), mma(400)}
                                           : std::vector<TileOp>{op(OpKind::kExp, 16 * 400), op(OpKind::kExp, 16 * 400)};
                           }));
  };
  EXPECT_NEAR(pair(d), 1600, 1);
  d.sm.sfu_holds_tensor = false;
  EXPECT_NEAR(pair(d), 800, 1);
}

// sm.fp32_holds_tensor: the same for FP32-pipe instructions (64 thread instructions per cycle at
// 128 FLOP/cycle).
TEST(WarpGroups, Fp32HoldsTheTensorPipeWhereTheDeviceSaysSo) {
  core::DeviceSpec d = small_gpu();
  auto pair = [&](const core::DeviceSpec& dev) {
    return cycles(dev, std::make_unique<GroupedLaunch>(
                           1, std::vector{kConsumer, kConsumer}, std::vector<std::uint32_t>{},
                           [](std::uint64_t, std::uint32_t g) {
                             return g == 0 ? std::vector<TileOp>{mma(400), mma(400)}
                                           : std::vector<TileOp>{op(OpKind::kElementwise, 64 * 400),
                                                                 op(OpKind::kElementwise, 64 * 400)};
                           }));
  };
  EXPECT_NEAR(pair(d), 800, 1);
  d.sm.sfu_holds_tensor = true;  // exponentials only: FP32 work still runs beside the MMAs
  EXPECT_NEAR(pair(d), 800, 1);
  d.sm.fp32_holds_tensor = true;
  EXPECT_NEAR(pair(d), 1600, 1);
}

TEST(WarpGroups, AsyncMmaRunsOnUntilItsGroupIsWaitedFor) {
  const core::DeviceSpec d = small_gpu();
  auto run = [&](std::vector<TileOp> ops) {
    return cycles(d, std::make_unique<GroupedLaunch>(1, std::vector{kConsumer}, std::vector<std::uint32_t>{},
                                                     [ops](std::uint64_t, std::uint32_t) { return ops; }));
  };
  const TileOp exp300 = op(OpKind::kExp, 16 * 300);
  // Sync MMA then exp: in series. Async MMA, exp, wait: overlapped.
  EXPECT_NEAR(run({mma(500), exp300}), 800, 1);
  EXPECT_NEAR(run({mma(500, true), op(OpKind::kMmaCommit), exp300, op(OpKind::kMmaWait, 0)}), 500, 1);
  // wait_group 1 lets the newest group run on; the older one is waited for.
  EXPECT_NEAR(run({mma(500, true), op(OpKind::kMmaCommit), mma(500, true), op(OpKind::kMmaCommit),
                   op(OpKind::kMmaWait, 1), exp300}),
              800, 1);
}

TEST(WarpGroups, NamedBarrierHoldsTheEarlyGroup) {
  const core::DeviceSpec d = small_gpu();
  auto run = [&](bool sync) {
    return cycles(d, std::make_unique<GroupedLaunch>(
                         1, std::vector{kConsumer, kConsumer}, std::vector<std::uint32_t>{},
                         [sync](std::uint64_t, std::uint32_t g) {
                           std::vector<TileOp> ops;
                           if (g == 0) ops.push_back(op(OpKind::kExp, 16 * 400));
                           if (sync) ops.push_back(named(OpKind::kNamedSync, 1, 256));
                           if (g == 1) ops.push_back(mma(300));
                           return ops;
                         }));
  };
  EXPECT_NEAR(run(false), 400, 1);
  EXPECT_NEAR(run(true), 400 + 4 + 300, 1);  // kBarrierCycles after the last arrival
}

TEST(WarpGroups, NamedArriveDoesNotWaitButReleasesTheSyncingGroup) {
  const core::DeviceSpec d = small_gpu();
  const double t = cycles(d, std::make_unique<GroupedLaunch>(
                                 1, std::vector{kConsumer, kConsumer}, std::vector<std::uint32_t>{},
                                 [](std::uint64_t, std::uint32_t g) {
                                   if (g == 0)  // arrives at 400, then 1000 more cycles of MMA
                                     return std::vector<TileOp>{op(OpKind::kExp, 16 * 400),
                                                                named(OpKind::kNamedArrive, 2, 256), mma(1000)};
                                   return std::vector<TileOp>{named(OpKind::kNamedSync, 2, 256),
                                                              op(OpKind::kExp, 16 * 100)};
                                 }));
  EXPECT_NEAR(t, 1400, 1);  // group 1's exp runs 404..504, under group 0's MMA
}

TEST(WarpGroups, SetmaxnregBeyondTheLaunchAllocationIsRejected) {
  // 2 groups x 4 warps at 64 registers launched; asking 40 + 120 per thread exceeds 2 x 64.
  auto l = std::make_unique<GroupedLaunch>(
      1, std::vector{core::WarpGroupSpec{core::WarpRole::kProducer, 4, 40},
                     core::WarpGroupSpec{core::WarpRole::kConsumer, 4, 120}},
      std::vector<std::uint32_t>{}, [](std::uint64_t, std::uint32_t) { return std::vector<TileOp>{}; });
  EXPECT_THROW(simulate(small_gpu(), program_of(std::move(l))), core::ConfigError);
  auto ok = std::make_unique<GroupedLaunch>(
      1, std::vector{core::WarpGroupSpec{core::WarpRole::kProducer, 4, 40},
                     core::WarpGroupSpec{core::WarpRole::kConsumer, 4, 88}},
      std::vector<std::uint32_t>{}, [](std::uint64_t, std::uint32_t) { return std::vector<TileOp>{mma(10)}; });
  EXPECT_NO_THROW(simulate(small_gpu(), program_of(std::move(ok))));
}

// Two CTAs of a cluster each expect 32 KiB on mbarrier 0; each loads its half (16 KiB) and
// multicasts it to both. Every byte is read from L2 once, and both CTAs finish.
TEST(WarpGroups, ClusterMulticastReadsEachByteOnceAndDeliversToBoth) {
  const core::DeviceSpec d = small_gpu();
  auto run = [&](bool multicast) {
    return simulate(d, program_of(std::make_unique<GroupedLaunch>(
                           2, std::vector{kConsumer}, std::vector<std::uint32_t>{1},
                           [multicast](std::uint64_t cta, std::uint32_t) {
                             std::vector<TileOp> ops;
                             if (multicast) {
                               ops.push_back(arrive(0, 2 * 64 * 256));
                               ops.push_back(tma((cta % 2) * 64 * 256, 64, 0, 0b11));
                             } else {  // each CTA loads the whole tile itself
                               ops.push_back(arrive(0, 2 * 64 * 256));
                               ops.push_back(tma(0, 128, 0));
                             }
                             ops.push_back(mbar_wait(0, 0));
                             return ops;
                           },
                           2)));
  };
  const auto mc = run(true), own = run(false);
  EXPECT_EQ(metric(mc[0], "dram__bytes_read.sum"), 2.0 * 64 * 256);
  EXPECT_EQ(metric(own[0], "dram__bytes_read.sum"), 2.0 * 64 * 256);
  EXPECT_NEAR(metric(mc[0], "lts__t_bytes.sum"), 2.0 * 64 * 256, 1);   // read once
  EXPECT_NEAR(metric(own[0], "lts__t_bytes.sum"), 4.0 * 64 * 256, 1);  // twice
}

TEST(WarpGroups, ClusterCtasStartTogether) {
  // 4 SMs, one CTA each (60 KiB of shared memory). Clusters of 2: CTAs 0-1 and 2-3 start at 0;
  // CTA 0 ends at 100, CTA 2 at 500, CTAs 1 and 3 at 1000. Cluster 2 (CTAs 4-5) starts when two
  // slots are free, at 500: CTA 4 (2000 cycles) ends at 2500. Placed one by one, CTA 4 would
  // start at 100 and the launch end at 2100.
  const core::DeviceSpec d = small_gpu();
  const std::vector<std::uint32_t> work = {100, 1000, 500, 1000, 2000, 100};
  auto run = [&](std::uint32_t cluster) {
    return cycles(d, std::make_unique<GroupedLaunch>(
                         6, std::vector{kConsumer}, std::vector<std::uint32_t>{},
                         [&](std::uint64_t cta, std::uint32_t) { return std::vector<TileOp>{mma(work[cta])}; }, cluster,
                         60 * 1024));
  };
  EXPECT_NEAR(run(1), 2100, 1);
  EXPECT_NEAR(run(2), 2500, 1);
}

TEST(WarpGroups, ClusterGridMustBeAMultipleOfTheClusterSize) {
  auto l = std::make_unique<GroupedLaunch>(3, std::vector{kConsumer}, std::vector<std::uint32_t>{},
                                           [](std::uint64_t, std::uint32_t) { return std::vector<TileOp>{}; }, 2);
  EXPECT_THROW(simulate(small_gpu(), program_of(std::move(l))), core::ConfigError);
}

}  // namespace
}  // namespace attnsim::engine
