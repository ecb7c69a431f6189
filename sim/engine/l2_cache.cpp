#include "sim/engine/l2_cache.h"

#include <algorithm>
#include <bit>

namespace attnsim::engine {

L2Cache::L2Cache(const core::L2Spec& spec)
    : partitions_(std::max<std::uint32_t>(1, spec.partitions)), pow2_(std::has_single_bit(partitions_)) {
  const core::Bytes line = spec.line_bytes ? spec.line_bytes : 128;
  const std::uint64_t lines_per_part = spec.capacity_bytes / line / partitions_;
  parts_.reserve(partitions_);
  for (std::uint32_t p = 0; p < partitions_; ++p) parts_.emplace_back(lines_per_part, spec.associativity);
}

L2Outcome L2Cache::access(std::uint64_t line, std::uint8_t mask, bool write, std::uint32_t near,
                          std::uint8_t tensor) {
  L2Outcome out;
  const std::uint64_t h = hash(line);
  const std::uint32_t home = home_of(h);
  near = partitions_ == 1 ? 0 : near % partitions_;
  const std::uint32_t sectors = sector_count(mask);
  SetAssocArray& hp = parts_[home];
  const std::uint32_t set = hp.set_of(h);  // same set index in every partition (same geometry)

  if (write) {
    if (home != near) {  // the near copy would go stale: drop it
      const std::uint32_t cw = parts_[near].find(set, line);
      if (cw != SetAssocArray::kNoWay) parts_[near].invalidate(set, cw);
    }
    bool hit = false;
    const std::uint32_t way = hp.find_or_insert(set, line, tensor, hit, out.writeback[0]);
    out.where = !hit ? L2Where::kMiss : (home == near ? L2Where::kNearHit : L2Where::kFarHit);
    out.hit_sectors = sector_count(static_cast<std::uint8_t>(hp.valid_mask(set, way) & mask));
    out.miss_sectors = 0;  // write-allocate without fetch: sectors are written whole
    hp.valid_mask(set, way) |= mask;
    hp.dirty_mask(set, way) |= mask;
    hp.tensor(set, way) = tensor;
    out.partition = home;
    return out;
  }

  if (home != near) {
    SetAssocArray& np = parts_[near];
    const std::uint32_t cw = np.find(set, line);
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
  const std::uint8_t missing = static_cast<std::uint8_t>(mask & ~hp.valid_mask(set, way));
  hp.valid_mask(set, way) |= mask;
  out.miss_sectors = sector_count(missing);
  out.hit_sectors = sectors - out.miss_sectors;
  out.partition = home;
  out.where = missing ? L2Where::kMiss : (home == near ? L2Where::kNearHit : L2Where::kFarHit);
  if (home != near) {  // keep a clean copy in the near partition
    SetAssocArray& np = parts_[near];
    bool copy_hit = false;
    const std::uint32_t cw = np.find_or_insert(set, line, tensor, copy_hit, out.writeback[1]);
    np.valid_mask(set, cw) |= mask;
  }
  return out;
}

}  // namespace attnsim::engine
