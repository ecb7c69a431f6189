#include "sim/engine/l2_cache.h"

#include <algorithm>
#include <bit>

namespace attnsim::engine {

L2Cache::L2Cache(const core::L2Spec& spec, core::Bytes unit_bytes)
    : partitions_(std::max<std::uint32_t>(1, spec.partitions)), pow2_(std::has_single_bit(partitions_)) {
  const core::Bytes unit = unit_bytes ? unit_bytes : (spec.line_bytes ? spec.line_bytes : 128);
  const core::Bytes sector = spec.sector_bytes ? spec.sector_bytes : 32;
  const std::uint64_t units_per_part = spec.capacity_bytes / unit / partitions_;
  parts_.reserve(partitions_);
  for (std::uint32_t p = 0; p < partitions_; ++p)
    parts_.emplace_back(units_per_part, spec.associativity, unit / sector > 8);
}

L2Outcome L2Cache::access(std::uint64_t line, std::uint64_t mask, bool write, std::uint32_t near,
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
