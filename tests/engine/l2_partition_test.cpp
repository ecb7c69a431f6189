// The partitioned L2's copies: a far SM's reads and writes leave a clean copy in its near
// partition, the home line alone holds (and writes back) the dirty sectors, and copies that a
// write would make stale are dropped.
#include <gtest/gtest.h>

#include "sim/engine/l2_cache.h"

namespace attnsim::engine {
namespace {

core::L2Spec two_partitions_of_one_set() {
  core::L2Spec s;
  s.capacity_bytes = 128 * 4 * 2;  // one set of 4 ways per partition
  s.associativity = 4;
  s.partitions = 2;
  return s;
}

std::uint64_t line_homed_in(const L2Cache& l2, std::uint32_t partition, std::uint64_t from = 0) {
  std::uint64_t line = from;
  while (l2.home_partition(line) != partition) ++line;
  return line;
}

TEST(L2Partitions, FarWriteLeavesACleanCopyInTheWritersNearPartition) {
  L2Cache l2(two_partitions_of_one_set());
  const std::uint64_t line = line_homed_in(l2, 1);
  const L2Outcome w = l2.access(line, 0xf, true, 0, 3);  // SM near partition 0 writes a line homed in 1
  EXPECT_EQ(w.partition, 1u);
  // The writer reads it back from its near copy; the home side reads its own line.
  EXPECT_EQ(l2.access(line, 0xf, false, 0, 3).where, L2Where::kNearHit);
  EXPECT_EQ(l2.access(line, 0xf, false, 1, 3).where, L2Where::kNearHit);
  // Only the home line is dirty: one write-back of four sectors.
  int lines = 0, sectors = 0;
  l2.flush([&](std::uint64_t l, std::uint64_t mask, std::uint8_t tensor) {
    EXPECT_EQ(l, line);
    EXPECT_EQ(tensor, 3);
    ++lines;
    sectors += __builtin_popcountll(mask);
  });
  EXPECT_EQ(lines, 1);
  EXPECT_EQ(sectors, 4);
}

TEST(L2Partitions, TheCopyOfAFarWriteTakesAWayOfTheNearPartition) {
  L2Cache l2(two_partitions_of_one_set());
  // Four lines homed in partition 0 fill its only set from SM side 0.
  std::uint64_t local[4];
  std::uint64_t next = 0;
  for (auto& l : local) {
    l = line_homed_in(l2, 0, next);
    next = l + 1;
    EXPECT_EQ(l2.access(l, 0xf, false, 0, 0).where, L2Where::kMiss);
  }
  // A write from side 0 to a line homed in partition 1 puts its copy into partition 0, evicting
  // the least recently used local line.
  const std::uint64_t far = line_homed_in(l2, 1);
  l2.access(far, 0xf, true, 0, 0);
  EXPECT_EQ(l2.access(local[0], 0xf, false, 0, 0).where, L2Where::kMiss);
  EXPECT_EQ(l2.access(local[3], 0xf, false, 0, 0).where, L2Where::kNearHit);
}

TEST(L2Partitions, AWriteFromTheHomeSideDropsTheFarCopy) {
  L2Cache l2(two_partitions_of_one_set());
  const std::uint64_t line = line_homed_in(l2, 1);
  l2.access(line, 0xf, false, 0, 0);  // side 0 reads: copy in partition 0
  EXPECT_EQ(l2.access(line, 0xf, false, 0, 0).where, L2Where::kNearHit);
  l2.access(line, 0x1, true, 1, 0);   // the home side writes sector 0: side 0's copy is stale
  const L2Outcome r = l2.access(line, 0xf, false, 0, 0);
  EXPECT_EQ(r.where, L2Where::kFarHit);  // served by the home line again (and copied anew)
  EXPECT_EQ(l2.access(line, 0xf, false, 0, 0).where, L2Where::kNearHit);
}

TEST(L2Partitions, APartialFarWriteCopiesOnlyTheWrittenSectors) {
  L2Cache l2(two_partitions_of_one_set());
  const std::uint64_t line = line_homed_in(l2, 1);
  l2.access(line, 0x3, true, 0, 0);  // side 0 writes sectors 0-1 only
  EXPECT_EQ(l2.access(line, 0x3, false, 0, 0).where, L2Where::kNearHit);
  // Sectors 2-3 were never written nor read: a miss at the home line fetches exactly those.
  const L2Outcome o = l2.access(line, 0xf, false, 0, 0);
  EXPECT_EQ(o.where, L2Where::kMiss);
  EXPECT_EQ(o.miss_sectors, 2u);
}

// A far read that finds only part of its sectors in the near copy is served by the home line,
// and the copy it had is completed in place (a second copy of the line would hide the sectors
// just fetched behind the first, partial one).
TEST(L2Partitions, APartialNearCopyIsCompletedInPlace) {
  L2Cache l2(two_partitions_of_one_set());
  const std::uint64_t line = line_homed_in(l2, 1);
  EXPECT_EQ(l2.access(line, 0x1, false, 0, 0).where, L2Where::kMiss);  // copy of sector 0
  const L2Outcome o = l2.access(line, 0xf, false, 0, 0);
  EXPECT_EQ(o.where, L2Where::kMiss);
  EXPECT_EQ(o.miss_sectors, 3u);
  EXPECT_EQ(l2.access(line, 0xf, false, 0, 0).where, L2Where::kNearHit);
  // The copy is the most recently used line of its set: three local lines do not evict it.
  std::uint64_t next = 0;
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t l = line_homed_in(l2, 0, next);
    next = l + 1;
    l2.access(l, 0xf, false, 0, 0);
  }
  EXPECT_EQ(l2.access(line, 0xf, false, 0, 0).where, L2Where::kNearHit);
}

}  // namespace
}  // namespace attnsim::engine
