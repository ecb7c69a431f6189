// The L2 as a functional cache: `partitions` partitions of set-associative LRU arrays of 128-B
// lines with 32-B sectors, write-back + write-allocate; no coherence protocol, no MSHR merging.
// Partitions (A100/H100/H200: two): every line has a home partition from an address hash. Each
// partition caches the data of the SMs attached to it ("each L2 partition localizes and caches
// data for memory accesses from SMs in the GPCs directly connected to the partition", A100 and
// H100 whitepapers). An SM reads its near partition first; a line homed in the far partition is
// looked up there on a near miss and a copy is then kept in the near partition too. A write goes
// to the home line (which holds the dirty sectors and writes them back) and, from a far SM, also
// leaves a clean copy of the written sectors in the writer's near partition; copies in any other
// partition are dropped. So a line used from the far side takes two ways, and one SM sees about
// half the L2 as near capacity.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/engine/set_assoc_array.h"

namespace attnsim::engine {

enum class L2Where : std::uint8_t { kNearHit, kFarHit, kMiss };

struct L2Outcome {
  L2Where where = L2Where::kMiss;
  std::uint32_t hit_sectors = 0;
  std::uint32_t miss_sectors = 0;   // sectors fetched from DRAM (reads only)
  std::uint64_t missing = 0;        // their mask
  std::uint32_t partition = 0;      // partition that served the data
  Victim writeback[2];              // dirty lines pushed out (at most one per partition touched)
};

class L2Cache {
 public:
  // Tracks `unit_bytes` blocks (the line size, or the coarser l2.tracking_bytes), each with a
  // mask of its sectors (0: the line size).
  explicit L2Cache(const core::L2Spec& spec, core::Bytes unit_bytes = 0);

  // One access to one unit by an SM whose near partition is `near`; `sector_mask` has bit i
  // set for each sector touched. Inline (below): it is the body of every global access.
  [[gnu::always_inline]] L2Outcome access(std::uint64_t unit, std::uint64_t sector_mask, bool write,
                                          std::uint32_t near, std::uint8_t tensor);
  // Starts fetching the host memory of the sets `line` maps to (a later access is faster).
  void prefetch(std::uint64_t line, std::uint32_t near) const {
    if (parts_.empty()) return;
    const std::uint64_t h = hash(line);
    const std::uint32_t set = parts_[0].set_of(h);
    const std::uint32_t home = home_of(h);
    parts_[home].prefetch(set);
    if (partitions_ > 1 && near % partitions_ != home) parts_[near % partitions_].prefetch(set);
  }
  std::uint32_t home_partition(std::uint64_t line) const { return home_of(hash(line)); }
  std::uint32_t sets() const { return parts_.empty() ? 0 : parts_[0].sets(); }  // per partition
  // Whether `line` maps to a set whose index is a multiple of `stride` (a power of two: set
  // sampling).
  bool in_sampled_set(std::uint64_t line, std::uint32_t stride) const {
    return parts_.empty() || (parts_[0].set_of(hash(line)) & (stride - 1)) == 0;
  }
  std::uint32_t partitions() const { return partitions_; }
  // Units the partitions could still take without evicting (empty ways): counted in the sets
  // whose index is a multiple of `stride` (set sampling: the sets that saw every access), times
  // `stride`.
  std::uint64_t empty_units(std::uint32_t stride) const {
    std::uint64_t n = 0;
    for (const auto& p : parts_) n += p.empty_ways(stride);
    return n * stride;
  }

  // Calls f(unit, dirty_mask, tensor) for each dirty unit, then invalidates everything.
  template <class F>
  void flush(F&& f) {
    for (auto& p : parts_) p.flush(f);
  }

  static std::uint64_t hash(std::uint64_t x) {
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
  }

 private:
  std::uint32_t home_of(std::uint64_t h) const {
    if (partitions_ == 1) return 0;
    const std::uint64_t x = h >> 32;
    return static_cast<std::uint32_t>(pow2_ ? x & (partitions_ - 1) : x % partitions_);
  }

  std::uint32_t partitions_;
  bool pow2_;
  std::vector<SetAssocArray> parts_;
};

inline L2Outcome L2Cache::access(std::uint64_t line, std::uint64_t mask, bool write, std::uint32_t near,
                                 std::uint8_t tensor) {
  L2Outcome out;
  const std::uint64_t h = hash(line);
  const std::uint32_t home = home_of(h);
  near = partitions_ == 1 ? 0 : near % partitions_;
  const std::uint32_t sectors = sector_count(mask);
  SetAssocArray& hp = parts_[home];
  const std::uint32_t set = hp.set_of(h);  // same set index in every partition (same geometry)

  if (write) {
    // Copies in partitions other than the writer's near one would go stale: drop them.
    for (std::uint32_t p = 0; p < partitions_; ++p) {
      if (p == home || p == near) continue;
      const std::uint32_t cw = parts_[p].find(set, line);
      if (cw != SetAssocArray::kNoWay) parts_[p].invalidate(set, cw);
    }
    bool hit = false;
    const std::uint32_t way = hp.find_or_insert(set, line, tensor, hit, out.writeback[0]);
    out.where = !hit ? L2Where::kMiss : (home == near ? L2Where::kNearHit : L2Where::kFarHit);
    out.hit_sectors = sector_count(hp.valid_mask(set, way) & mask);
    out.miss_sectors = 0;  // write-allocate without fetch: sectors are written whole
    hp.set_valid_mask(set, way, hp.valid_mask(set, way) | mask);
    hp.set_dirty_mask(set, way, hp.dirty_mask(set, way) | mask);
    hp.tensor(set, way) = tensor;
    out.partition = home;
    if (home != near) {  // the writer's near partition keeps a clean copy of what it wrote
      SetAssocArray& np = parts_[near];
      bool copy_hit = false;
      const std::uint32_t cw = np.find_or_insert(set, line, tensor, copy_hit, out.writeback[1]);
      np.set_valid_mask(set, cw, np.valid_mask(set, cw) | mask);
    }
    return out;
  }

  std::uint32_t near_way = SetAssocArray::kNoWay;  // the near copy, if any (home != near)
  if (home != near) {
    SetAssocArray& np = parts_[near];
    const std::uint32_t cw = near_way = np.find(set, line);
    if (cw != SetAssocArray::kNoWay && (np.valid_mask(set, cw) & mask) == mask) {
      np.touch(set, cw);
      out.where = L2Where::kNearHit;
      out.hit_sectors = sectors;
      out.partition = near;
      return out;
    }
  }
  bool hit = false;
  const std::uint32_t way = hp.find_or_insert(set, line, tensor, hit, out.writeback[0]);
  const std::uint64_t missing = mask & ~hp.valid_mask(set, way);
  hp.set_valid_mask(set, way, hp.valid_mask(set, way) | mask);
  out.missing = missing;
  out.miss_sectors = sector_count(missing);
  out.hit_sectors = sectors - out.miss_sectors;
  out.partition = home;
  out.where = missing ? L2Where::kMiss : (home == near ? L2Where::kNearHit : L2Where::kFarHit);
  if (home != near) {  // keep a clean copy in the near partition (the home lookup left it as found)
    SetAssocArray& np = parts_[near];
    if (near_way == SetAssocArray::kNoWay) near_way = np.insert(set, line, tensor, out.writeback[1]);
    else np.touch(set, near_way);
    np.set_valid_mask(set, near_way, np.valid_mask(set, near_way) | mask);
  }
  return out;
}

}  // namespace attnsim::engine
