// The engine end to end on a hand-built device: conservation, exact bytes with the L2 off,
// compulsory bytes with a large L2, async-group semantics, Little's law, the progress guard.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/errors.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"
#include "sim/io/launch_metrics.h"
#include "test_launches.h"

namespace attnsim::engine {
namespace {

using testing::load;
using testing::metric;
using testing::program_of;
using testing::ScriptedLaunch;
using testing::simple;
using testing::small_gpu;
using testing::store;


// 8 CTAs each load the same 64 x 100-B tile (rows 256 B apart, not line aligned) twice.
core::TileProgram reread_program() {
  return program_of(std::make_unique<ScriptedLaunch>(8, 128, 0, [](std::uint64_t) {
    return std::vector<core::TileOp>{load(40, 64, 100, 256, true), simple(core::OpKind::kCommit),
                                     simple(core::OpKind::kWait, 0), load(40, 64, 100, 256, true),
                                     simple(core::OpKind::kCommit), simple(core::OpKind::kWait, 0)};
  }));
}

TEST(Engine, L2OffSendsEveryRequestedByteToHbmExactly) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  const auto r = simulate(d, reread_program());
  // 8 CTAs x 2 loads x 64 rows x 100 B, no sector rounding.
  EXPECT_EQ(r.at(0).tensors.dram[core::Tensor::kK].read, 8u * 2 * 64 * 100);
  EXPECT_EQ(metric(r[0], "dram__bytes_read.sum"), 8.0 * 2 * 64 * 100);
}

TEST(Engine, LargeL2ReadsEachSectorFromHbmOnce) {
  const auto r = simulate(small_gpu(), reread_program());
  // Rows start at 40 + 256 r: bytes [40, 140) of a 256-B period touch sectors 1..4 (32-B units),
  // i.e. 4 sectors per row, whichever line they fall in: 64 rows x 4 x 32 B, read once.
  EXPECT_EQ(r.at(0).tensors.dram[core::Tensor::kK].read, 64u * 4 * 32);
}

TEST(Engine, BytesLeavingHbmEqualBytesFilledIntoL2) {
  const auto r = simulate(small_gpu(), reread_program());
  const double hit = metric(r[0], "lts__t_sector_hit_rate.pct") / 100.0;
  const double lts = metric(r[0], "lts__t_bytes.sum");
  // Every L2 sector request either hits or is filled from HBM.
  EXPECT_NEAR(lts * (1 - hit), metric(r[0], "dram__bytes_read.sum"), 1e-6);
}

// EngineOptions::progress: called during each launch and once at its end (done, every CTA
// retired), with the launch's index, count and name; the results are those of a run without it.
TEST(Engine, ProgressReportsEachLaunchAndLeavesResultsAlone) {
  core::TileProgram p = reread_program();
  p.launches.push_back(std::make_unique<ScriptedLaunch>(4, 128, 0, [](std::uint64_t cta) {
    return std::vector<core::TileOp>{store(cta * 4096, 16, 256, 256)};
  }));
  const auto plain = simulate(small_gpu(), p);
  struct Seen {
    LaunchProgress p;
    std::string name;
  };
  std::vector<Seen> seen;
  EngineOptions o;
  o.progress_every_events = 4;
  o.progress = [&](const LaunchProgress& q) { seen.push_back({q, std::string(q.name)}); };
  const auto watched = simulate(small_gpu(), p, o);
  ASSERT_EQ(watched.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    const core::Metrics w = io::launch_metrics(watched[k].totals), m = io::launch_metrics(plain[k].totals);
    ASSERT_EQ(w.size(), m.size());
    for (std::size_t i = 0; i < m.size(); ++i) EXPECT_EQ(w[i].value, m[i].value) << m[i].name;
  }
  std::size_t done = 0, running = 0;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const LaunchProgress& q = seen[i].p;
    EXPECT_EQ(q.launches, 2u);
    EXPECT_EQ(q.launch, done) << "call " << i;  // launches in order, each ended by its done call
    EXPECT_EQ(seen[i].name, watched[q.launch].name);
    EXPECT_LE(q.ctas_retired, q.ctas);
    if (i > 0 && seen[i - 1].p.launch == q.launch) {
      EXPECT_GE(q.ctas_retired, seen[i - 1].p.ctas_retired);
      EXPECT_GT(q.events, seen[i - 1].p.events);
      EXPECT_GE(q.cycles, seen[i - 1].p.cycles);
    }
    if (q.done) {
      EXPECT_EQ(q.ctas_retired, q.ctas);
      EXPECT_EQ(q.cycles, metric(watched[q.launch], "attnsim__cycles"));
      ++done;
    } else {
      ++running;
    }
  }
  EXPECT_EQ(done, 2u);
  EXPECT_GT(running, 3u);  // every 4 events: reported during the run, not only at its end
  EXPECT_EQ(seen.front().p.ctas, 8u);
}

TEST(Engine, DirtyLinesAreWrittenBackAtTheEndOfTheLaunch) {
  const auto p = program_of(std::make_unique<ScriptedLaunch>(4, 128, 0, [](std::uint64_t cta) {
    return std::vector<core::TileOp>{store(cta * 4096, 16, 256, 256)};
  }));
  const auto r = simulate(small_gpu(), p);
  EXPECT_EQ(r.at(0).tensors.dram[core::Tensor::kO].write, 4u * 16 * 256);
  EXPECT_EQ(metric(r[0], "dram__bytes_write.sum"), 4.0 * 16 * 256);
}

TEST(Engine, WaitZeroBlocksUntilTheLoadArrives) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 32, 0, [](std::uint64_t) {
    return std::vector<core::TileOp>{load(0, 1, 128, 128, true), simple(core::OpKind::kCommit),
                                     simple(core::OpKind::kWait, 0)};
  }));
  // One 128-B line: 128 B through the LSU (1e6 B/cycle), 2 cycles on a 64 B/cycle channel,
  // then 100 cycles latency.
  EXPECT_DOUBLE_EQ(metric(simulate(d, p).at(0), "attnsim__cycles"), 128 / 1e6 + 2 + 100);
}

TEST(Engine, WaitWithOneGroupAllowedOverlapsTheNextLoad) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  // Two groups (lines on different addresses), then wait(1): only the first must be back;
  // then wait(0) for the second. Both were issued at t=0, so the total is one latency, not two.
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 32, 0, [](std::uint64_t) {
    return std::vector<core::TileOp>{load(0, 1, 128, 128, true), simple(core::OpKind::kCommit),
                                     load(1 << 20, 1, 128, 128, true), simple(core::OpKind::kCommit),
                                     simple(core::OpKind::kWait, 1), simple(core::OpKind::kWait, 0)};
  }));
  EXPECT_LT(metric(simulate(d, p).at(0), "attnsim__cycles"), 2 * 100.0);
}

TEST(Engine, InFlightLimitMakesBandwidthLatencyBound) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  d.hbm.bandwidth_gbps = 1e6;            // bandwidth is not the limit
  d.sm.max_inflight_bytes_per_warp = 256;  // one warp: 256 B in flight
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 32, 0, [](std::uint64_t) {
    return std::vector<core::TileOp>{load(0, 1, 64 * 1024, 0, true), simple(core::OpKind::kCommit),
                                     simple(core::OpKind::kWait, 0)};
  }));
  const double cycles = metric(simulate(d, p).at(0), "attnsim__cycles");
  // Little's law: 256 B per ~100-cycle round trip -> 64 KiB takes about 256 round trips.
  EXPECT_NEAR(cycles, 256 * 100.0, 256 * 100.0 * 0.05);
}

// A launch whose code keeps fewer bytes in flight per warp than the device allows
// (LaunchShape::inflight_bytes_per_warp, e.g. PyTorch's non-contiguous elementwise loop) is held to
// its own allowance; a larger one leaves the device's. One warp, 64 KiB at ~100 cycles a round trip.
TEST(Engine, ALaunchsOwnInFlightAllowanceTightensTheDevices) {
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  d.hbm.bandwidth_gbps = 1e6;            // bandwidth is not the limit
  d.sm.max_inflight_bytes_per_warp = 256;
  class Own : public ScriptedLaunch {
   public:
    Own(core::Bytes per_warp, Script s) : ScriptedLaunch(1, 32, 0, std::move(s)), per_warp_(per_warp) {}
    core::LaunchShape shape() const override {
      core::LaunchShape s = ScriptedLaunch::shape();
      s.inflight_bytes_per_warp = per_warp_;
      return s;
    }

   private:
    core::Bytes per_warp_;
  };
  auto cycles = [&](core::Bytes per_warp) {
    const auto p = program_of(std::make_unique<Own>(per_warp, [](std::uint64_t) {
      return std::vector<core::TileOp>{load(0, 1, 64 * 1024, 0, true), simple(core::OpKind::kCommit),
                                       simple(core::OpKind::kWait, 0)};
    }));
    return metric(simulate(d, p).at(0), "attnsim__cycles");
  };
  const double device = cycles(0);
  EXPECT_NEAR(device, 256 * 100.0, 256 * 100.0 * 0.05);
  EXPECT_NEAR(cycles(128), 2 * device, 2 * device * 0.05);  // half the bytes in flight: twice the round trips
  EXPECT_EQ(cycles(512), device);                            // above the device's: the device's
}

TEST(Engine, ReturnedCreditsCoalesceBeforeAWaitingCtaResumes) {
  // One 4-warp CTA streams 1 MiB with 4 x 1264 B in flight (h200's per-warp allowance): a CTA
  // out of credits resumes once three lines of room are back, so the chunks it issues (and the
  // credit events that return them) do not fragment towards one per line (~0.5 events per line
  // when every returned chunk resumed the CTA).
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  d.sm.max_inflight_bytes_per_warp = 1264;
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 128, 0, [](std::uint64_t) {
    std::vector<core::TileOp> ops;
    for (int i = 0; i < 64; ++i) {  // 64 loads of 16 KiB, waited for two groups behind
      ops.push_back(load(static_cast<core::Bytes>(i) * 16384, 1, 16384, 0, true));
      ops.push_back(simple(core::OpKind::kCommit));
      ops.push_back(simple(core::OpKind::kWait, 2));
      ops.push_back(simple(core::OpKind::kElementwise, 8192));
    }
    return ops;
  }));
  const auto r = simulate(d, p).at(0);
  const double lines = 64.0 * 16384 / 128;
  EXPECT_EQ(metric(r, "dram__bytes_read.sum"), 64.0 * 16384);
  EXPECT_LT(metric(r, "attnsim__events"), 0.25 * lines);
}

TEST(Engine, CtasWaitingForTheSmAllowanceAllResume) {
  // A small SM allowance shared by 8 CTAs per SM, loads smaller than a chunk and 48-B rows that
  // straddle lines: every waiting CTA resumes (no deadlock) and every byte is read exactly once.
  core::DeviceSpec d = small_gpu();
  d.l2.capacity_bytes = 0;
  d.sm.max_inflight_bytes_per_warp = 160;
  d.sm.max_inflight_bytes_per_sm = 400;
  const auto p = program_of(std::make_unique<ScriptedLaunch>(64, 32, 0, [](std::uint64_t cta) {
    const core::Bytes base = cta * 8192;
    return std::vector<core::TileOp>{load(base + 40, 37, 48, 80, true), simple(core::OpKind::kCommit),
                                     load(base + 4000, 1, 100, 0, false), load(base + 5000, 3, 1000, 1024, true),
                                     simple(core::OpKind::kCommit), simple(core::OpKind::kWait, 0)};
  }));
  const auto r = simulate(d, p).at(0);
  EXPECT_EQ(metric(r, "launch__grid_size"), 64.0);
  EXPECT_EQ(metric(r, "dram__bytes_read.sum"), 64.0 * (37 * 48 + 100 + 3 * 1000));
}

TEST(Engine, CtaNeedingMoreSharedMemoryThanAnSmIsAConfigError) {
  const auto p = program_of(std::make_unique<ScriptedLaunch>(1, 128, 1 << 20, [](std::uint64_t) {
    return std::vector<core::TileOp>{simple(core::OpKind::kBarrier)};
  }));
  EXPECT_THROW(simulate(small_gpu(), p), core::ConfigError);
}

class EndlessEmptySteps : public core::KernelLaunch {
 public:
  std::string name() const override { return "endless"; }
  core::LaunchShape shape() const override { return {}; }
  bool emit_step(std::uint64_t, std::uint64_t, std::vector<core::TileOp>&) const override { return true; }
};

TEST(Engine, ProgramThatNeverAdvancesEndsInSimErrorNotAHang) {
  EngineOptions o;
  o.stall_limit_events = 10000;
  EXPECT_THROW(simulate(small_gpu(), program_of(std::make_unique<EndlessEmptySteps>()), o), core::SimError);
}

TEST(Engine, WavesAndOccupancyMetricsFollowTheOccupancyRules) {
  // 48 KiB of shared memory per CTA on a 100 KiB SM: 2 CTAs per SM, 4 SMs -> 8 per wave.
  const auto p = program_of(std::make_unique<ScriptedLaunch>(20, 128, 48 * 1024, [](std::uint64_t) {
    return std::vector<core::TileOp>{simple(core::OpKind::kElementwise, 1280)};
  }));
  const auto r = simulate(small_gpu(), p).at(0);
  EXPECT_EQ(metric(r, "launch__occupancy_limit_shared_mem"), 2.0);
  EXPECT_DOUBLE_EQ(metric(r, "launch__waves_per_multiprocessor"), 20.0 / 8.0);
  // Each CTA needs 20 cycles of an SM's FP32 pipe (1280 instructions / (128 FLOP / 2) per cycle;
  // its 10 cycles of issue slots overlap them); the pipe serves one at a time and a freed slot is
  // refilled at once, so each SM runs its 5 CTAs back to back.
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__cycles"), 5 * 20.0);
}

TEST(Engine, APartialLastWaveIsTheLaunchsTail) {
  // One CTA per SM (64 KiB of shared memory on a 100 KiB SM), 4 SMs, CTAs of 20 FP32 cycles each.
  auto launch = [](std::uint64_t ctas) {
    return program_of(std::make_unique<ScriptedLaunch>(ctas, 128, 64 * 1024, [](std::uint64_t) {
      return std::vector<core::TileOp>{simple(core::OpKind::kElementwise, 1280)};
    }));
  };
  // Two whole waves: the last four CTAs end together, nothing rests on a straggler.
  EXPECT_DOUBLE_EQ(metric(simulate(small_gpu(), launch(8)).at(0), "attnsim__tail_pct"), 0.0);
  // A fifth CTA alone in the second wave: the launch ends 20 cycles after the median end of the
  // last four CTAs (20 cycles): half its time.
  const auto r = simulate(small_gpu(), launch(5)).at(0);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__cycles"), 40.0);
  EXPECT_DOUBLE_EQ(metric(r, "attnsim__tail_pct"), 50.0);
}

TEST(Engine, InstructionIssueIsSharedByTheCtasOfAnSm) {
  // 4 schedulers x 32 lanes = 128 thread instructions per cycle per SM; 2 CTAs per SM (48 KiB of
  // shared memory each), 8 CTAs on 4 SMs: each SM issues 2 x 12800 instructions in 200 cycles.
  core::DeviceSpec d = small_gpu();
  ASSERT_EQ(d.sm.schedulers_per_sm, 4u);
  const auto p = program_of(std::make_unique<ScriptedLaunch>(8, 128, 48 * 1024, [](std::uint64_t) {
    return std::vector<core::TileOp>{simple(core::OpKind::kIssue, 12800)};
  }));
  EXPECT_DOUBLE_EQ(metric(simulate(d, p).at(0), "attnsim__cycles"), 200.0);
  // Two schedulers: twice as long; the FP32 and SFU rates do not enter.
  d.sm.schedulers_per_sm = 2;
  d.sm.fp32_flops_per_cycle = 1;
  d.sm.exp_per_cycle = 1;
  EXPECT_DOUBLE_EQ(metric(simulate(d, p).at(0), "attnsim__cycles"), 400.0);
}

TEST(Engine, SameProgramGivesIdenticalMetrics) {
  const auto a = simulate(small_gpu(), reread_program()).at(0);
  const auto b = simulate(small_gpu(), reread_program()).at(0);
  const core::Metrics ma = io::launch_metrics(a.totals), mb = io::launch_metrics(b.totals);
  ASSERT_EQ(ma.size(), mb.size());
  for (std::size_t i = 0; i < ma.size(); ++i) EXPECT_EQ(ma[i].value, mb[i].value) << ma[i].name;
}

}  // namespace
}  // namespace attnsim::engine
