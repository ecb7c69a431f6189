// MemorySystem (and ScratchpadMemory) alone and end to end: with the L2 off (capacity 0) global loads bypass the L1 as
// well, so every requested byte reaches HBM even on a preset whose L1 caches global loads.
#include <gtest/gtest.h>

#include "sim/config/device_loader.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"
#include "sim/engine/l2_cache.h"
#include "sim/engine/memory_system.h"
#include "sim/engine/scratchpad_memory.h"
#include "test_launches.h"

namespace attnsim::engine {
namespace {

using testing::load;
using testing::program_of;
using testing::ScriptedLaunch;

core::DeviceSpec h200_with_l2_off() {
  core::DeviceSpec d = config::load_device("h200");
  d.l2.capacity_bytes = 0;
  return d;
}

TEST(MemorySystem, L2OffBypassesTheL1ForGlobalLoads) {
  const core::DeviceSpec d = h200_with_l2_off();
  ASSERT_TRUE(d.sm.l1_caches_global_loads);  // the preset caches global loads in L1
  MemorySystem m(d, 128 * 1024);
  for (int i = 0; i < 3; ++i) m.read(0, 0, 4096, 128, core::Tensor::kK, true);
  EXPECT_EQ(m.counters().l1_hits, 0u);
  EXPECT_EQ(m.traffic().dram[core::Tensor::kK].read, 3u * 128);
  EXPECT_EQ(m.traffic().l1[core::Tensor::kK].read, 0u);
}

// A scratchpad device's memory caches nothing, even with a nonzero l2.capacity_bytes: every
// re-read reaches HBM with its exact bytes and passes a DMA engine of its core (busy cycles =
// HBM bytes / engine rate), and is back no earlier than the DMA latency.
TEST(ScratchpadMemory, EveryAccessReachesHbmThroughADmaEngine) {
  core::DeviceSpec d = config::load_device("scratchpad-accel");
  ASSERT_EQ(d.kind, core::DeviceKind::kScratchpad);
  d.l2.capacity_bytes = 1 << 20;
  ScratchpadMemory m(d, 0);
  double done = 0;
  for (int i = 0; i < 3; ++i) done = m.read(0, 0, 4096, 100, core::Tensor::kK, true);
  m.write(0, 1, 8192, 64, core::Tensor::kO);
  EXPECT_EQ(m.traffic().dram[core::Tensor::kK].read, 300u);
  EXPECT_EQ(m.traffic().dram[core::Tensor::kO].write, 64u);
  EXPECT_EQ(m.counters().lts_bytes, 364u);
  EXPECT_EQ(m.counters().l1_hits + m.counters().l2_near_hits + m.counters().l2_far_hits, 0u);
  EXPECT_GE(done, static_cast<double>(d.scratchpad.dma_latency_cycles));
  EXPECT_DOUBLE_EQ(m.dma_busy_cycles(), 364.0 / d.scratchpad.dma_bytes_per_cycle);
  EXPECT_EQ(m.l2_busy_cycles(), 0);
  EXPECT_EQ(m.flush(5), 5);
}

TEST(MemorySystem, L1StillCachesGlobalLoadsWithTheL2On) {
  const core::DeviceSpec d = config::load_device("h200");
  MemorySystem m(d, 128 * 1024);
  for (int i = 0; i < 3; ++i) m.read(0, 0, 4096, 128, core::Tensor::kK, true);
  EXPECT_EQ(m.counters().l1_hits, 2u);
  EXPECT_EQ(m.traffic().dram[core::Tensor::kK].read, 128u);
}

// lts__t counts tag lookups: a request that its SM's near partition does not serve (a read that
// misses the near copy, a store to a line homed in the far partition) is looked up there and then
// in the line's home partition (two stages); a near hit and a request for a line homed on the
// near side are one lookup each.
TEST(MemorySystem, ARequestTheNearPartitionDoesNotServeIsCountedAtBothTagStages) {
  const core::DeviceSpec d = config::load_device("h200");
  ASSERT_EQ(d.l2.partitions, 2u);
  MemorySystem m(d, 0);
  const L2Cache probe(d.l2);  // same partition count, so the same home partitions
  ASSERT_EQ(m.near_partition(0), 0u);
  auto line_homed_in = [&](std::uint32_t p, std::uint64_t from) {
    while (probe.home_partition(from) != p) ++from;
    return from;
  };
  const std::uint64_t far = line_homed_in(1, 1000), near = line_homed_in(0, 1000);
  const std::uint64_t far_written = line_homed_in(1, far + 1), near_written = line_homed_in(0, near + 1);
  const auto lts = [&] { return m.counters().lts_bytes; };

  m.read(0, 0, far * 128, 128, core::Tensor::kK, false);  // near miss, then home miss (DRAM)
  EXPECT_EQ(lts(), 2u * 128);
  EXPECT_EQ(m.counters().lts_sectors, 8u);
  EXPECT_EQ(m.counters().lts_hit_sectors, 0u);
  m.read(0, 0, far * 128, 128, core::Tensor::kK, false);  // the near copy now serves it
  EXPECT_EQ(lts(), 3u * 128);
  EXPECT_EQ(m.counters().lts_hit_sectors, 4u);
  m.read(0, 0, near * 128, 128, core::Tensor::kK, false);  // homed on the near side: one stage
  EXPECT_EQ(lts(), 4u * 128);
  m.write(0, 0, far_written * 128, 128, core::Tensor::kO);  // a far store: two stages
  EXPECT_EQ(lts(), 6u * 128);
  m.write(0, 0, near_written * 128, 128, core::Tensor::kO);  // a near store: one
  EXPECT_EQ(lts(), 7u * 128);
  EXPECT_EQ(m.traffic().lts[core::Tensor::kK].read, 4u * 128);  // per tensor as in the total
  EXPECT_EQ(m.traffic().lts[core::Tensor::kO].write, 3u * 128);
  EXPECT_EQ(m.counters().l2_request_bytes, 5u * 128);  // requests, each counted once
}

// Nsight Compute counts every store sector as an L2 hit, at each stage it is looked up in (a
// store does not wait for its line); loads of absent sectors are misses.
TEST(MemorySystem, StoresCountAsL2HitsLoadsOfAbsentSectorsAsMisses) {
  const core::DeviceSpec d = config::load_device("h200");
  MemorySystem m(d, 0);
  const L2Cache probe(d.l2);
  std::uint64_t line = 1 << 13, far_line = 1 << 13;
  while (probe.home_partition(line) != m.near_partition(0)) ++line;
  while (probe.home_partition(far_line) == m.near_partition(0)) ++far_line;
  m.write(0, 0, line * 128, 96, core::Tensor::kO);  // 3 sectors of a near-homed line not in the L2
  EXPECT_EQ(m.counters().lts_sectors, 3u);
  EXPECT_EQ(m.counters().lts_hit_sectors, 3u);
  m.read(0, 0, line * 128, 128, core::Tensor::kO, false);  // the 4th sector misses
  EXPECT_EQ(m.counters().lts_sectors, 3u + 4u);
  EXPECT_EQ(m.counters().lts_hit_sectors, 3u + 3u);
  EXPECT_EQ(m.traffic().dram[core::Tensor::kO].read, 32u);
  m.write(0, 0, far_line * 128, 64, core::Tensor::kO);  // 2 sectors, far-homed: hits at both stages
  EXPECT_EQ(m.counters().lts_sectors, 7u + 4u);
  EXPECT_EQ(m.counters().lts_hit_sectors, 6u + 4u);
}

TEST(Engine, L2OffSendsEveryByteOfRepeatedBlockingLoadsToHbmOnAnL1CachingPreset) {
  // 4 CTAs each load the same 32 x 256-B tile three times with blocking (synchronous) loads.
  const auto p = program_of(std::make_unique<ScriptedLaunch>(4, 128, 0, [](std::uint64_t) {
    std::vector<core::TileOp> ops;
    for (int i = 0; i < 3; ++i) ops.push_back(load(1 << 20, 32, 256, 256, false));
    return ops;
  }));
  const auto r = simulate(h200_with_l2_off(), p);
  EXPECT_EQ(r.at(0).tensors.dram[core::Tensor::kK].read, 4u * 3 * 32 * 256);
  EXPECT_EQ(r[0].totals.memory.l1_hits, 0u);
}

}  // namespace
}  // namespace attnsim::engine
