#include "sim/engine/set_assoc_array.h"

#include <numeric>

namespace attnsim::engine {

SetAssocArray::SetAssocArray(std::uint64_t lines, std::uint32_t ways) {
  assoc_ = std::max<std::uint32_t>(1, ways);
  sets_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, lines / assoc_));
  const std::size_t n = static_cast<std::size_t>(sets_) * assoc_;
  ways_.assign(n, Way{});
}

std::uint32_t SetAssocArray::find_or_insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
                                            bool& hit, Victim& victim) {
  Way* w = &ways_[static_cast<std::size_t>(set) * assoc_];
  const std::uint64_t tag = line + 1;
  std::uint32_t way = 0;
  std::uint32_t oldest = 0xffffffffu;  // above any 24-bit stamp
  bool empty_found = false;
  for (std::uint32_t i = 0; i < assoc_; ++i) {
    if (w[i].tag == tag) {
      w[i].stamp = next_stamp();
      hit = true;
      return i;
    }
    if (empty_found) continue;
    if (w[i].tag == 0) {
      way = i;
      empty_found = true;
    } else if (w[i].stamp < oldest) {
      oldest = w[i].stamp;
      way = i;
    }
  }
  hit = false;
  victim.valid = w[way].tag != 0;
  victim.line = victim.valid ? static_cast<std::uint64_t>(w[way].tag) - 1 : 0;
  victim.dirty_mask = victim.valid ? w[way].dirty : 0;
  victim.tensor = w[way].tensor;
  w[way].tag = tag;
  w[way].stamp = next_stamp();
  w[way].valid = 0;
  w[way].dirty = 0;
  w[way].tensor = tensor;
  return way;
}

void SetAssocArray::invalidate(std::uint32_t set, std::uint32_t way) {
  ways_[idx(set, way)] = Way{};
}

void SetAssocArray::renumber() {
  std::vector<std::uint32_t> order(assoc_);
  for (std::uint32_t s = 0; s < sets_; ++s) {
    Way* w = &ways_[static_cast<std::size_t>(s) * assoc_];
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return w[a].stamp < w[b].stamp; });
    for (std::uint32_t r = 0; r < assoc_; ++r) w[order[r]].stamp = r + 1;
  }
  clock_ = assoc_ + 1;
}

}  // namespace attnsim::engine
