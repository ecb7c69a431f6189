#include "sim/engine/l1_cache.h"

#include "sim/engine/l2_cache.h"

namespace attnsim::engine {

L1Cache::L1Cache(core::Bytes capacity_bytes, core::Bytes line_bytes, std::uint32_t sectors)
    : enabled_(capacity_bytes >= line_bytes * kWays),
      array_(enabled_ ? capacity_bytes / line_bytes : 1, kWays, sectors) {}

bool L1Cache::load(std::uint64_t line, std::uint64_t sectors) {
  const std::uint32_t set = array_.set_of(L2Cache::hash(line) >> 16);
  bool hit = false;
  Victim v;
  const std::uint32_t way = array_.find_or_insert(set, line, 0, hit, v);
  if (sectors == 0) return hit;
  const std::uint64_t have = array_.valid_mask(set, way);
  array_.set_valid_mask(set, way, have | sectors);
  return hit && (have & sectors) == sectors;
}

}  // namespace attnsim::engine
