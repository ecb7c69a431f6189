// Components alone: event queue, bandwidth server, HBM channels, L2 tag store, bank conflicts,
// the fluid load of sampled simulation, the last wave's retire times.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "sim/engine/bandwidth_server.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/fluid_load.h"
#include "sim/engine/hbm.h"
#include "sim/engine/l2_cache.h"
#include "sim/engine/last_wave.h"
#include "sim/engine/shared_memory_banks.h"

namespace attnsim::engine {
namespace {

TEST(EventQueue, PopsInTimeOrderAndBreaksTiesByInsertion) {
  EventQueue q;
  q.push(5, EventKind::kResume, 1);
  q.push(2, EventKind::kResume, 2);
  q.push(5, EventKind::kResume, 3);
  q.push(2, EventKind::kCredit, 4);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().slot);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{2, 4, 1, 3}));
}

// A skipped step's bytes spread over its span: a timed access there runs at the rate the fluid
// leaves (half the capacity: twice as long), not behind a queue of the whole step's bytes.
// The tail is measured against the median of the last `size` retirements only: earlier waves'
// ends have left the window.
TEST(LastWave, TailIsTheLastEndsExcessOverTheLastWavesMedian) {
  LastWave w(4);
  EXPECT_DOUBLE_EQ(w.tail(100), 0.0);  // nothing retired
  for (double t : {10.0, 11.0, 12.0, 13.0}) w.retire(t);  // a first wave
  for (double t : {90.0, 92.0, 94.0, 100.0}) w.retire(t);  // the last: median (upper) 94
  EXPECT_DOUBLE_EQ(w.tail(100), 0.06);
  LastWave one(8);  // fewer CTAs than slots: the median of those that retired
  for (double t : {50.0, 60.0, 100.0}) one.retire(t);
  EXPECT_DOUBLE_EQ(one.tail(100), 0.4);
}

TEST(FluidLoad, TimedAccessesSeeTheFluidsShareOfTheCapacity) {
  FluidLoad f(10.0);                            // 10 bytes per cycle
  EXPECT_DOUBLE_EQ(f.factor(1000), 1.0);        // nothing there
  EXPECT_DOUBLE_EQ(f.add(0, 4096, 20480), 0);   // 5 B/cycle over [0, 4096); nothing carried before
  EXPECT_DOUBLE_EQ(f.factor(1000), 2.0);        // half the capacity left
  EXPECT_DOUBLE_EQ(f.factor(5000), 1.0);        // after the span
  f.add(0, 4096, 81920);                        // 25 B/cycle more: oversubscribed, capped at 90 %
  EXPECT_DOUBLE_EQ(f.factor(1000), 10.0);
}

// A step lasts at least as long as the level needed for the fluid it carried over the span
// before (complete when the step starts): skipped steps that together ask for more than the
// capacity slow down, however many CTAs skip at once.
TEST(FluidLoad, AStepAfterAnOversubscribedSpanTakesWhatTheLevelNeeded) {
  FluidLoad f(10.0);
  f.add(0, 1024, 5120);                                   // 5 B/cycle over [0, 1024)
  EXPECT_DOUBLE_EQ(f.add(1024, 1024, 5120), 1024 + 512);  // the span before carried 5120 B: 512 cycles
  f.add(1024, 1024, 25600);                               // [1024, 2048) now carries 30720 B
  EXPECT_DOUBLE_EQ(f.add(2048, 1024, 1), 2048 + 3072);    // 30720 B at 10 B/cycle
  EXPECT_DOUBLE_EQ(f.add(2048, 512, 1), 2048 + 1536);     // half that span: half its bytes
  FluidLoad off;
  EXPECT_FALSE(off.enabled());
  EXPECT_DOUBLE_EQ(off.add(7, 100, 1e6), 7);
  EXPECT_DOUBLE_EQ(off.factor(7), 1.0);
}

// A span beyond the fluid's horizon (32768 buckets / 4 of 256 cycles: 2,097,152 cycles; a long CTA
// skipped whole) keeps its rate: its bytes over its whole span, the tail past the horizon dropped.
// At the clamped span the rate came out 4x too high here.
TEST(FluidLoad, ASpanBeyondTheHorizonKeepsItsRate) {
  FluidLoad f(10.0);
  const double horizon = 2097152, span = 4 * horizon;
  f.add(0, span, 5.0 * span);                // 5 B/cycle over the whole span
  EXPECT_DOUBLE_EQ(f.factor(1000), 2.0);     // half the capacity left, not 20 B/cycle (capped at 90 %)
  EXPECT_DOUBLE_EQ(f.factor(horizon + 1000), 1.0);  // past the horizon: dropped
}

// Spans that cover whole blocks of buckets are added and summed block-wise: the same fluid as
// bucket by bucket (a plain array of buckets here), short and long spans, across the horizon.
TEST(FluidLoad, BlockWiseSpansHoldWhatBucketWiseOnesWould) {
  constexpr double kWidth = 256, kHorizon = 2097152;  // cycles per bucket; kBuckets / 4 of them
  std::vector<double> plain(1 << 18, 0.0);              // absolute buckets, no wrap-around
  auto plain_add = [&](double t0, double duration, double bytes) {
    duration = std::max(duration, kWidth);
    const double rate = bytes / duration;
    duration = std::min(duration, kHorizon);
    double before = 0;
    for (std::size_t b = 0; b < plain.size(); ++b) {
      const double lo = static_cast<double>(b) * kWidth, hi = lo + kWidth;
      plain[b] += rate * std::max(0.0, std::min(hi, t0 + duration) - std::max(lo, t0));
      // The span before, this span's bytes in t0's bucket included (uniform within a bucket).
      before += plain[b] * std::max(0.0, std::min(hi, t0) - std::max(lo, t0 - duration)) / kWidth;
    }
    return t0 + before / 10.0;
  };
  FluidLoad f(10.0);
  std::uint64_t x = 12345;
  auto next = [&x](double scale) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(x >> 11) / 9007199254740992.0 * scale;
  };
  double t = 0;
  for (int i = 0; i < 300; ++i) {  // over about three horizons of 8,388,608 cycles (32,768 buckets)
    t += next(160000);
    const double duration = i % 5 == 0 ? next(3 * kHorizon) : next(60000);  // some longer than the horizon
    const double bytes = next(1e7);
    const double got = f.add(t, duration, bytes), want = plain_add(t, duration, bytes);
    ASSERT_NEAR(got, want, 1e-9 * want) << "add " << i;
    for (double probe : {t - 30000.0, t + 1000.0, t + 100000.0}) {
      const auto b = static_cast<std::size_t>(std::max(0.0, probe) / kWidth);
      const double u = std::min(0.9, plain[b] / (10.0 * kWidth));
      ASSERT_NEAR(f.factor(probe), 1.0 / (1.0 - u), 1e-9) << "factor at " << probe << " after add " << i;
    }
  }
  ASSERT_LT(t + 3 * kHorizon, static_cast<double>(plain.size()) * kWidth);
}

TEST(BandwidthServer, QueuesRequestsThatArriveWhileBusy) {
  BandwidthServer s(4.0);                 // 4 bytes per cycle
  EXPECT_DOUBLE_EQ(s.serve(0, 40), 10);   // 40 B take 10 cycles
  EXPECT_DOUBLE_EQ(s.serve(3, 8), 12);    // arrives at 3, starts when free at 10
  EXPECT_DOUBLE_EQ(s.serve(20, 4), 21);   // idle server starts at arrival
}

core::HbmSpec one_channel_hbm() {
  core::HbmSpec h;
  h.channels = 2;
  h.interleave_bytes = 128;
  h.bandwidth_gbps = 128;  // 64 B/cycle per channel at 1 GHz
  h.latency_cycles = 300;
  return h;
}

// Sampled mode: a skipped step lasts at least as long as the channels need for the fluid of the
// span before it plus the timed work queued at them. Each timed byte held its channel 1 / (1 - u)
// as long (u the fluid's share), so the queue counts at the rate the timed bytes alone take: it
// counted the fluid a second time before, and the skipped steps of a DRAM-bound GEMM (standard's
// P V on the h200, B1 H32 N8192 d128) came out 4.4 % slower than in a full run (-0.5 % now).
TEST(HbmChannel, SkippedStepCountsTheTimedBacklogAtItsOwnRate) {
  Hbm hbm(one_channel_hbm(), 1.0);  // 2 channels of 64 B/cycle: 128 B/cycle
  hbm.enable_background();
  hbm.add_background(0, 4096, 4096 * 64);  // 64 B/cycle over [0, 4096): half the capacity
  double done = 0;
  for (int i = 0; i < 10; ++i) done = hbm.read(1000, 0, 128);  // one channel, each 2 cycles x 2
  EXPECT_DOUBLE_EQ(done, 1040 + 300);
  // The fluid of [488, 1000): 32768 B, 256 cycles at 128 B/cycle; the queue: 40 cycles on one of
  // two channels, 20 on average, 10 at the timed bytes' own rate (20 before).
  EXPECT_NEAR(hbm.add_background(1000, 512, 1), 1000 + 256 + 10, 0.01);  // + the 1 B, spread over its bucket
}

TEST(HbmChannel, IsolatedLoadSeesBaseLatency) {
  Hbm hbm(one_channel_hbm(), 1.0);
  // 128 B on a 64 B/cycle channel: 2 cycles of transfer, then the configured latency.
  EXPECT_DOUBLE_EQ(hbm.read(1000, 0, 128), 1000 + 2 + 300);
}

TEST(HbmChannel, StreamingReachesPeakBandwidth) {
  Hbm hbm(one_channel_hbm(), 1.0);
  double last = 0;
  const int lines = 20000;
  for (int i = 0; i < lines; ++i) last = std::max(last, hbm.read(0, static_cast<core::Bytes>(i) * 128, 128));
  const double bytes_per_cycle = lines * 128.0 / (last - 300);
  EXPECT_NEAR(bytes_per_cycle, 128.0, 128.0 * 0.02);  // both channels busy: the peak, within hashing imbalance
}

TEST(HbmChannel, CountsBytesReadAndWritten) {
  Hbm hbm(one_channel_hbm(), 1.0);
  hbm.read(0, 0, 96);
  hbm.write(0, 4096, 32);
  EXPECT_EQ(hbm.bytes_read(), 96u);
  EXPECT_EQ(hbm.bytes_written(), 32u);
}

// hbm.write_bandwidth_gbps: a write occupies its channel at the write bandwidth, a read at the
// read bandwidth, in Hbm::write and in Hbm::transfer alike; 0 = the read bandwidth.
TEST(HbmChannel, WritesOccupyTheChannelAtTheWriteBandwidth) {
  core::HbmSpec spec = one_channel_hbm();
  spec.write_bandwidth_gbps = 64;  // 32 B/cycle per channel: a 128-B write takes 4 cycles
  Hbm hbm(spec, 1.0);
  EXPECT_DOUBLE_EQ(hbm.write(0, 0, 128), 4);
  EXPECT_DOUBLE_EQ(hbm.read(0, 0, 128), 4 + 2 + 300);  // queued behind the write, then 2 cycles
  EXPECT_DOUBLE_EQ(hbm.transfer(10, 0, 0xf, 4, 128, 32, true), 14);
  Hbm same(one_channel_hbm(), 1.0);
  EXPECT_DOUBLE_EQ(same.write(0, 0, 128), 2);
}

// Hbm::transfer (the block model's DRAM requests) is one read / write per granule with sectors
// to move: the same completion times, channel state and byte counts as the granule-by-granule
// calls, for whole, partial and empty granules and for reads queued behind earlier ones.
TEST(HbmChannel, TransferEqualsOneRequestPerGranule) {
  core::HbmSpec spec = one_channel_hbm();
  spec.channels = 3;  // not a power of two: the modulo path
  Hbm a(spec, 1.0), b(spec, 1.0);
  const std::uint64_t masks[] = {0xffff, 0x0f0f, 0x1001, 0x00f0, 0x8000, 0x0};
  for (int round = 0; round < 3; ++round)
    for (std::uint64_t mask : masks) {
      const bool write = (round + static_cast<int>(mask)) % 2 == 1;
      const double t = 10.0 * round;
      const core::Bytes base = 2048 * static_cast<core::Bytes>(round + 1);
      double want = t;
      for (std::uint32_t g = 0; g < 4; ++g) {
        const std::uint64_t m = (mask >> (4 * g)) & 0xf;
        if (m == 0) continue;
        const core::Bytes bytes = 32 * static_cast<core::Bytes>(__builtin_popcountll(m));
        want = std::max(want, write ? b.write(t, base + 128 * g, bytes) : b.read(t, base + 128 * g, bytes));
      }
      EXPECT_DOUBLE_EQ(a.transfer(t, base, mask, 4, 128, 32, write), want) << std::hex << mask;
    }
  EXPECT_EQ(a.bytes_read(), b.bytes_read());
  EXPECT_EQ(a.bytes_written(), b.bytes_written());
  EXPECT_DOUBLE_EQ(a.read(100, 0, 128), b.read(100, 0, 128));  // channel state alike
}

// credit_at: the bytes-weighted mean, over groups of `group` requests, of each group's last
// completion: with groups of one, the mean completion; with one group, the last (= the return).
TEST(HbmChannel, TransferCreditTimeAveragesGroupsOfRequests) {
  core::HbmSpec spec = one_channel_hbm();
  spec.channels = 1;  // requests queue one behind another: 128 B take 1 cycle each
  double credit = 0;
  Hbm one(spec, 1.0);
  EXPECT_DOUBLE_EQ(one.transfer(0, 0, 0xffff, 4, 128, 32, false, 1, &credit), 4 + 300);
  EXPECT_DOUBLE_EQ(credit, (1 + 2 + 3 + 4) / 4.0 + 300);
  Hbm pairs(spec, 1.0);
  pairs.transfer(0, 0, 0xffff, 4, 128, 32, false, 2, &credit);
  EXPECT_DOUBLE_EQ(credit, (2 + 4) / 2.0 + 300);
  Hbm all(spec, 1.0);
  all.transfer(0, 0, 0x0fff, 4, 128, 32, true, 8, &credit);  // writes: no latency
  EXPECT_DOUBLE_EQ(credit, 3);
  Hbm gap(spec, 1.0);  // granules 0, 1 and 3 (not a run from the first): groups {0, 1}, {3}
  EXPECT_DOUBLE_EQ(gap.transfer(0, 0, 0xf0ff, 4, 128, 32, false, 2, &credit), 3 + 300);
  EXPECT_DOUBLE_EQ(credit, (256 * 2 + 128 * 3) / 384.0 + 300);
  Hbm none(spec, 1.0);
  EXPECT_DOUBLE_EQ(none.transfer(5, 0, 0, 4, 128, 32, false, 2, &credit), 5);
  EXPECT_DOUBLE_EQ(credit, 5);  // nothing to move: back at once
}

// `spacing`: granule g arrives at t + g x spacing (a block's lines leaving the SM one after
// another), on the whole-granule path and on the masked one; closer than a granule's transfer
// time, the channel's queue decides as if they had arrived together.
TEST(HbmChannel, TransferSpacingStaggersTheRequests) {
  core::HbmSpec spec = one_channel_hbm();
  spec.channels = 1;  // 128 B take 1 cycle each
  double credit = 0;
  Hbm whole(spec, 1.0);  // arrivals 0, 2, 4, 6: done 1, 3, 5, 7
  EXPECT_DOUBLE_EQ(whole.transfer(0, 0, 0xffff, 4, 128, 32, false, 1, &credit, 2), 7 + 300);
  EXPECT_DOUBLE_EQ(credit, (1 + 3 + 5 + 7) / 4.0 + 300);
  Hbm gap(spec, 1.0);  // granules 0, 1, 3 arrive at 10, 12, 16
  EXPECT_DOUBLE_EQ(gap.transfer(10, 0, 0xf0ff, 4, 128, 32, false, 2, &credit, 2), 17 + 300);
  EXPECT_DOUBLE_EQ(credit, (256 * 13 + 128 * 17) / 384.0 + 300);
  Hbm close(spec, 1.0);  // arrivals 0, 0.5, 1, 1.5: the queue's 1, 2, 3, 4
  EXPECT_DOUBLE_EQ(close.transfer(0, 0, 0xffff, 4, 128, 32, false, 1, &credit, 0.5), 4 + 300);
  EXPECT_DOUBLE_EQ(credit, (1 + 2 + 3 + 4) / 4.0 + 300);
}

// The table and the bit arithmetic of sector_count against a bit-by-bit count.
TEST(SectorMask, SectorCountEqualsTheNumberOfSetBits) {
  auto naive = [](std::uint64_t x) {
    std::uint32_t n = 0;
    for (; x != 0; x >>= 1) n += static_cast<std::uint32_t>(x & 1);
    return n;
  };
  for (std::uint64_t x = 0; x < 4096; ++x) ASSERT_EQ(sector_count(x), naive(x)) << "x = " << x;
  std::uint64_t x = 0x243f6a8885a308d3ull;
  for (int i = 0; i < 100000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    ASSERT_EQ(sector_count(x), naive(x)) << "x = " << x;
  }
  EXPECT_EQ(sector_count(~0ull), 64u);
}

// The channel lookup's remainder without a division equals x % d for every divisor kind (1, odd,
// even, powers of two, the presets' 192 and 80, large) at the edges of the 64-bit range and on
// pseudo-random values.
TEST(HbmChannel, FastModuloEqualsTheRemainder) {
  // narrow_mod applies to 1, 2, 12, 40, 64, 80, 96, 192, 65536, 2^32, 3 * 2^20, 2^63; not to 3, 5, 6,
  // 7, 1000, 4093, 2^32 + 1 and the large odd ones.
  const std::uint64_t divisors[] = {1,          2,           3,          5,           6,          7,
                                    12,         40,          64,         80,          96,         192,
                                    1000,       4093,        65536,      1ull << 32,  3ull << 20, 1ull << 63,
                                    (1ull << 32) + 1,        0x7fb5d329728ea185ull,   ~0ull - 1,  ~0ull};
  int narrow = 0;
  for (const std::uint64_t d : divisors) narrow += FastModulo(d).narrow() ? 1 : 0;
  EXPECT_EQ(narrow, 12);
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (const std::uint64_t d : divisors) {
    const FastModulo mod(d);
    const std::uint64_t top = ~std::uint64_t{0};
    for (const std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1}, d - 1, d, d + 1, 2 * d - 1, top, top - 1,
                                  top / d * d, top / d * d - 1}) {
      ASSERT_EQ(mod(v), v % d) << "x = " << v << ", d = " << d;
      if (mod.narrow()) {
        ASSERT_EQ(mod.narrow_mod(v), v % d) << "narrow, x = " << v << ", d = " << d;
      }
    }
    for (int i = 0; i < 100000; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      ASSERT_EQ(mod(x), x % d) << "x = " << x << ", d = " << d;
      ASSERT_EQ(mod(x >> 40), (x >> 40) % d) << "x = " << (x >> 40) << ", d = " << d;
      if (mod.narrow()) {
        ASSERT_EQ(mod.narrow_mod(x), x % d) << "narrow, x = " << x << ", d = " << d;
        ASSERT_EQ(mod.narrow_mod(x >> 40), (x >> 40) % d) << "narrow, x = " << (x >> 40) << ", d = " << d;
      }
    }
  }
}

core::L2Spec tiny_l2(std::uint32_t partitions = 1) {
  core::L2Spec s;
  s.capacity_bytes = 128 * 4 * partitions;  // one set of 4 ways per partition
  s.associativity = 4;
  s.partitions = partitions;
  return s;
}

TEST(L2Cache, SecondReadOfALineHits) {
  L2Cache l2(tiny_l2());
  EXPECT_EQ(l2.access(7, 0xf, false, 0, 0).where, L2Where::kMiss);
  const L2Outcome o = l2.access(7, 0xf, false, 0, 0);
  EXPECT_EQ(o.where, L2Where::kNearHit);
  EXPECT_EQ(o.hit_sectors, 4u);
}

TEST(L2Cache, MissFetchesOnlyTheMissingSectors) {
  L2Cache l2(tiny_l2());
  EXPECT_EQ(l2.access(3, 0x1, false, 0, 0).miss_sectors, 1u);
  const L2Outcome o = l2.access(3, 0x3, false, 0, 0);  // sector 0 present, sector 1 not
  EXPECT_EQ(o.where, L2Where::kMiss);
  EXPECT_EQ(o.miss_sectors, 1u);
  EXPECT_EQ(o.hit_sectors, 1u);
}

TEST(L2Cache, DirtyEvictionWritesBackOneLine) {
  L2Cache l2(tiny_l2());  // one set, 4 ways
  l2.access(100, 0x3, true, 0, 5);  // dirty: sectors 0 and 1
  for (std::uint64_t line = 1; line <= 3; ++line) l2.access(line, 0xf, false, 0, 0);
  const L2Outcome o = l2.access(4, 0xf, false, 0, 0);  // fifth line evicts the LRU one: line 100
  ASSERT_TRUE(o.writeback[0].valid);
  EXPECT_EQ(o.writeback[0].line, 100u);
  EXPECT_EQ(o.writeback[0].dirty_mask, 0x3);
  EXPECT_EQ(o.writeback[0].tensor, 5);
}

TEST(L2Cache, LeastRecentlyUsedLineIsEvicted) {
  L2Cache l2(tiny_l2());
  for (std::uint64_t line = 1; line <= 4; ++line) l2.access(line, 0xf, false, 0, 0);
  l2.access(1, 0xf, false, 0, 0);  // 1 becomes most recent; 2 is now LRU
  l2.access(5, 0xf, false, 0, 0);
  EXPECT_EQ(l2.access(1, 0xf, false, 0, 0).where, L2Where::kNearHit);
  EXPECT_EQ(l2.access(2, 0xf, false, 0, 0).where, L2Where::kMiss);
}

TEST(L2Cache, FarLineIsCopiedIntoTheNearPartition) {
  L2Cache l2(tiny_l2(2));
  std::uint64_t line = 0;
  while (l2.home_partition(line) != 1) ++line;
  EXPECT_EQ(l2.access(line, 0xf, false, 0, 0).where, L2Where::kMiss);
  EXPECT_EQ(l2.access(line, 0xf, false, 0, 0).where, L2Where::kNearHit);   // the copy
  EXPECT_EQ(l2.access(line, 0xf, false, 1, 0).where, L2Where::kNearHit);   // home is near for partition 1
}

TEST(L2Cache, FlushReportsEachDirtyLineOnceAndEmpties) {
  L2Cache l2(tiny_l2());
  l2.access(1, 0xf, true, 0, 0);
  l2.access(2, 0x1, true, 0, 0);
  l2.access(3, 0xf, false, 0, 0);
  int lines = 0, sectors = 0;
  l2.flush([&](std::uint64_t, std::uint8_t mask, std::uint8_t) {
    ++lines;
    sectors += __builtin_popcount(mask);
  });
  EXPECT_EQ(lines, 2);
  EXPECT_EQ(sectors, 5);
  EXPECT_EQ(l2.access(3, 0xf, false, 0, 0).where, L2Where::kMiss);
}

core::TileOp smem_op(std::uint32_t rows, std::uint32_t row_bytes, core::SmemPattern p) {
  core::TileOp op;
  op.kind = core::OpKind::kSharedRead;
  op.rows = rows;
  op.row_bytes = row_bytes;
  op.pattern = p;
  return op;
}

TEST(SharedMemoryBanks, RowMajorRowsOf128BytesConflictEightWays) {
  SharedMemoryBanks b(32, 4);
  // 8 rows x 128 B: 8 requests (one per 16-B column); each puts all 8 rows on the same 4 banks.
  const BankCost c = b.cost(smem_op(8, 128, core::SmemPattern::kRowMajor));
  EXPECT_EQ(c.wavefronts, 64u);
  EXPECT_EQ(c.conflicts, 56u);
}

TEST(SharedMemoryBanks, PaddedRowsAreConflictFree) {
  SharedMemoryBanks b(32, 4);
  const BankCost c = b.cost(smem_op(64, 256, core::SmemPattern::kPadded));
  EXPECT_EQ(c.conflicts, 0u);
  EXPECT_EQ(c.wavefronts, 8u * 16u);  // 64/8 row groups x 256/16 columns, one wavefront each
}

TEST(SharedMemoryBanks, SwizzledRowsAreConflictFree) {
  SharedMemoryBanks b(32, 4);
  EXPECT_EQ(b.cost(smem_op(64, 128, core::SmemPattern::kSwizzled)).conflicts, 0u);
}

}  // namespace
}  // namespace attnsim::engine
