// SetAssocArray against a reference LRU model (one std::list per set): the same hits, the same
// victims (first empty way, else least recently used), dirty masks and flush contents, through
// random accesses, invalidations and lines above 2^32 (the high tag byte path). And the event
// queue against a sort by (time, insertion order).
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <stdexcept>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/set_assoc_array.h"

namespace attnsim::engine {
namespace {

struct RefSet {
  std::list<std::uint64_t> lru;  // front = most recently used
  std::map<std::uint64_t, std::uint64_t> valid, dirty;
  std::map<std::uint64_t, std::uint8_t> tensor;
};

// `sectors`: the mask width the array is built for (up to 4: valid and dirty packed in one
// byte; up to 8: a byte each; more: the wide arrays); masks are random within it.
void run_against_reference(std::uint32_t ways, std::uint32_t sets, std::uint64_t line_range, std::uint64_t base,
                           unsigned seed, std::uint32_t sectors = 4) {
  SetAssocArray a(static_cast<std::uint64_t>(sets) * ways, ways, sectors);
  ASSERT_EQ(a.sets(), sets);
  const std::uint64_t all = sectors >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << sectors) - 1;
  std::vector<RefSet> ref(sets);
  std::mt19937_64 rng(seed);
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t line = base + rng() % line_range;
    const std::uint32_t set = static_cast<std::uint32_t>(line % sets);
    RefSet& r = ref[set];
    const auto it = std::find(r.lru.begin(), r.lru.end(), line);
    if (rng() % 10 == 0) {  // invalidate, if present
      const std::uint32_t w = a.find(set, line);
      ASSERT_EQ(w != SetAssocArray::kNoWay, it != r.lru.end()) << "step " << step;
      if (w != SetAssocArray::kNoWay) {
        a.invalidate(set, w);
        r.lru.erase(it);
        r.valid.erase(line);
        r.dirty.erase(line);
        r.tensor.erase(line);
      }
      continue;
    }
    bool hit = false;
    Victim v;
    const std::uint8_t tensor = static_cast<std::uint8_t>(rng() % 22);
    const std::uint32_t w = a.find_or_insert(set, line, tensor, hit, v);
    ASSERT_EQ(hit, it != r.lru.end()) << "step " << step;
    if (hit) {
      r.lru.erase(it);
    } else {
      if (r.lru.size() == ways) {
        const std::uint64_t lru = r.lru.back();
        ASSERT_TRUE(v.valid) << "step " << step;
        ASSERT_EQ(v.line, lru) << "step " << step;
        ASSERT_EQ(v.dirty_mask, r.dirty[lru]) << "step " << step;
        ASSERT_EQ(v.tensor, r.tensor[lru]) << "step " << step;
        r.lru.pop_back();
        r.valid.erase(lru);
        r.dirty.erase(lru);
        r.tensor.erase(lru);
      } else {
        ASSERT_FALSE(v.valid) << "step " << step;
      }
      r.valid[line] = 0;
      r.dirty[line] = 0;
      r.tensor[line] = tensor;
    }
    r.lru.push_front(line);
    ASSERT_EQ(a.valid_mask(set, w), r.valid[line]) << "step " << step;
    ASSERT_EQ(a.dirty_mask(set, w), r.dirty[line]) << "step " << step;
    ASSERT_EQ(a.tensor(set, w), r.tensor[line]) << "step " << step;
    // New valid and dirty sectors, each set on its own (so neither mask can stand in for the other).
    const std::uint64_t vm = rng() % 3 == 0 ? rng() & all : 0;
    const std::uint64_t d = rng() % (sectors > 8 ? 4 : 2) == 0 ? rng() & all : 0;
    a.set_valid_mask(set, w, a.valid_mask(set, w) | vm);
    r.valid[line] |= vm;
    a.set_dirty_mask(set, w, a.dirty_mask(set, w) | d);
    r.dirty[line] |= d;
    ASSERT_EQ(a.valid_mask(set, w), r.valid[line]) << "step " << step;
    ASSERT_EQ(a.dirty_mask(set, w), r.dirty[line]) << "step " << step;
  }
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint8_t>> flushed, expected;
  a.flush([&](std::uint64_t line, std::uint64_t dirty, std::uint8_t tensor) { flushed.insert({line, dirty, tensor}); });
  for (const RefSet& r : ref)
    for (const auto& [line, d] : r.dirty)
      if (d != 0) expected.insert({line, d, r.tensor.at(line)});
  EXPECT_EQ(flushed, expected);
  EXPECT_GT(expected.size(), 0u);
  for (std::uint32_t s = 0; s < sets; ++s) EXPECT_EQ(a.find(s, base + s), SetAssocArray::kNoWay);
}

TEST(SetAssocArray, MatchesReferenceLruSixteenWays) { run_against_reference(16, 8, 300, 0, 1); }
TEST(SetAssocArray, MatchesReferenceLruFourWays) { run_against_reference(4, 16, 200, 0, 2); }
TEST(SetAssocArray, MatchesReferenceLruSixtyFourWays) { run_against_reference(64, 2, 300, 0, 3); }
TEST(SetAssocArray, MatchesReferenceLruOneHundredTwentyEightWays) { run_against_reference(128, 2, 400, 0, 7); }
TEST(SetAssocArray, RejectsMoreWaysThanItsRanksHold) {
  EXPECT_THROW(SetAssocArray(1024, SetAssocArray::kMaxWays * 2), std::invalid_argument);
}
TEST(SetAssocArray, MatchesReferenceLruTwelveWaysPadded) { run_against_reference(12, 4, 120, 0, 4); }
TEST(SetAssocArray, MatchesReferenceLruWideMasks) { run_against_reference(16, 8, 300, 0, 6, 64); }
// 5-8 sectors: a valid and a dirty byte per way (a 192-B set block for 16 ways).
TEST(SetAssocArray, MatchesReferenceLruEightSectorMasks) { run_against_reference(16, 8, 300, 0, 8, 8); }
TEST(SetAssocArray, MatchesReferenceLruTwoSectorMasks) { run_against_reference(16, 8, 300, 0, 9, 2); }
// Lines around 2^32: tags whose low word is 0 and lines that differ only in the high byte.
TEST(SetAssocArray, MatchesReferenceLruAboveFourBillionLines) {
  run_against_reference(16, 8, 400, (std::uint64_t{1} << 32) - 200, 5);
}
TEST(SetAssocArray, HighTagByteSeparatesLinesWithEqualLowWords) {
  SetAssocArray a(16, 16);
  bool hit = false;
  Victim v;
  a.find_or_insert(0, 5, 0, hit, v);
  EXPECT_EQ(a.find(0, 5 + (std::uint64_t{1} << 32)), SetAssocArray::kNoWay);
  a.find_or_insert(0, 5 + (std::uint64_t{1} << 32), 0, hit, v);
  EXPECT_FALSE(hit);
  EXPECT_NE(a.find(0, 5), a.find(0, 5 + (std::uint64_t{1} << 32)));
}

TEST(EventQueue, PopsTheSmallestTimeThenInsertionOrderAmongQueued) {
  EventQueue q;
  std::set<std::pair<double, std::uint64_t>> ref;  // (time, sequence) of the queued events
  std::mt19937_64 rng(7);
  std::uint64_t pops = 0;
  for (int round = 0; round < 5000; ++round) {
    const int pushes = static_cast<int>(rng() % 5);
    for (int k = 0; k < pushes; ++k) {
      const double t = static_cast<double>(rng() % 50);  // many ties
      ref.insert({t, q.pushed()});
      q.push(t, EventKind::kResume, 0);
    }
    while (!q.empty() && (rng() % 3 != 0 || round == 4999)) {
      const Event e = q.pop();
      ASSERT_FALSE(ref.empty());
      ASSERT_EQ(std::make_pair(e.time, e.seq), *ref.begin()) << "pop " << pops;
      ref.erase(ref.begin());
      ++pops;
    }
  }
  EXPECT_TRUE(ref.empty());
  EXPECT_GT(pops, 1000u);
}

}  // namespace
}  // namespace attnsim::engine
