#include "sim/engine/set_assoc_array.h"

#include <algorithm>

namespace attnsim::engine {

SetAssocArray::SetAssocArray(std::uint64_t lines, std::uint32_t ways) {
  ways_ = std::max<std::uint32_t>(1, ways);
  sets_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, lines / ways_));
  const std::size_t n = static_cast<std::size_t>(sets_) * ways_;
  tag_.assign(n, 0);
  stamp_.assign(n, 0);
  valid_.assign(n, 0);
  dirty_.assign(n, 0);
  tensor_.assign(n, 0);
}

std::uint32_t SetAssocArray::insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
                                    Victim& victim) {
  const std::size_t base = static_cast<std::size_t>(set) * ways_;
  std::uint32_t way = 0;
  std::uint64_t oldest = ~std::uint64_t{0};
  for (std::uint32_t w = 0; w < ways_; ++w) {
    if (tag_[base + w] == 0) {
      way = w;
      oldest = 0;
      break;
    }
    if (stamp_[base + w] < oldest) {
      oldest = stamp_[base + w];
      way = w;
    }
  }
  const std::size_t i = base + way;
  victim.valid = tag_[i] != 0;
  victim.line = tag_[i] ? tag_[i] - 1 : 0;
  victim.dirty_mask = tag_[i] ? dirty_[i] : 0;
  victim.tensor = tensor_[i];
  tag_[i] = line + 1;
  valid_[i] = 0;
  dirty_[i] = 0;
  tensor_[i] = tensor;
  stamp_[i] = ++clock_;
  return way;
}

void SetAssocArray::invalidate(std::uint32_t set, std::uint32_t way) {
  const std::size_t i = idx(set, way);
  tag_[i] = 0;
  valid_[i] = 0;
  dirty_[i] = 0;
}

}  // namespace attnsim::engine
