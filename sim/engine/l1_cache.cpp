#include "sim/engine/l1_cache.h"

#include "sim/engine/l2_cache.h"

namespace attnsim::engine {

L1Cache::L1Cache(core::Bytes capacity_bytes, core::Bytes line_bytes)
    : enabled_(capacity_bytes >= line_bytes * kWays),
      array_(enabled_ ? capacity_bytes / line_bytes : 1, kWays) {}

bool L1Cache::load(std::uint64_t line) {
  const std::uint32_t set = array_.set_of(L2Cache::hash(line) >> 16);
  bool hit = false;
  Victim v;
  array_.find_or_insert(set, line, 0, hit, v);
  return hit;
}

}  // namespace attnsim::engine
