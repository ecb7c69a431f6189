#include "sim/engine/set_assoc_array.h"

#include <stdexcept>
#include <string>

namespace attnsim::engine {

SetAssocArray::SetAssocArray(std::uint64_t lines, std::uint32_t ways, bool wide_masks) : wide_(wide_masks) {
  assoc_ = std::max<std::uint32_t>(1, ways);
  if (assoc_ > kMaxWays)
    throw std::invalid_argument("SetAssocArray: " + std::to_string(ways) + " ways, at most " +
                                std::to_string(kMaxWays));
  padded_ = (assoc_ + 15) / 16 * 16;
  sets_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, lines / assoc_));
  rank_off_ = 4 * static_cast<std::size_t>(padded_);
  hi_off_ = rank_off_ + padded_;
  valid_off_ = hi_off_ + padded_;
  dirty_off_ = valid_off_ + padded_;
  stride_ = (dirty_off_ + padded_ + 63) / 64 * 64;
  mem_.resize(static_cast<std::size_t>(sets_) * (stride_ / 64));
  tensor_.resize(static_cast<std::size_t>(sets_) * padded_);
  if (wide_) {
    valid64_.resize(static_cast<std::size_t>(sets_) * padded_);
    dirty64_.resize(static_cast<std::size_t>(sets_) * padded_);
  }
  clear();
}

void SetAssocArray::clear() {
  std::fill(mem_.begin(), mem_.end(), Block{});
  std::fill(tensor_.begin(), tensor_.end(), 0);
  std::fill(valid64_.begin(), valid64_.end(), 0);
  std::fill(dirty64_.begin(), dirty64_.end(), 0);
  // Empty ways rank by index, so fills take the first empty way first.
  for (std::uint32_t s = 0; s < sets_; ++s) {
    std::uint8_t* ranks = block(s) + rank_off_;
    for (std::uint32_t i = 0; i < padded_; ++i)
      ranks[i] = static_cast<std::uint8_t>(i < assoc_ ? static_cast<std::int8_t>(i) : kPadRank);
  }
}

std::uint32_t SetAssocArray::find_or_insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
                                            bool& hit, Victim& victim) {
  std::uint8_t* b = block(set);
  const std::uint64_t tag = line + 1;
  const std::uint32_t lo = static_cast<std::uint32_t>(tag);
  const std::uint8_t hi = static_cast<std::uint8_t>(tag >> 32);
  const std::uint32_t* tags = reinterpret_cast<const std::uint32_t*>(b);
  for (std::uint32_t c = 0; c < padded_; c += 16) {
    for (std::uint32_t m = match16(tags + c, lo); m != 0; m &= m - 1) {
      const std::uint32_t i = c + static_cast<std::uint32_t>(__builtin_ctz(m));
      if (b[hi_off_ + i] == hi) {
        promote(b + rank_off_, i);
        hit = true;
        return i;
      }
    }
  }
  hit = false;
  return place(set, lo, hi, tensor, victim);
}

std::uint32_t SetAssocArray::insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor, Victim& victim) {
  const std::uint64_t tag = line + 1;
  return place(set, static_cast<std::uint32_t>(tag), static_cast<std::uint8_t>(tag >> 32), tensor, victim);
}

inline std::uint32_t SetAssocArray::place(std::uint32_t set, std::uint32_t lo, std::uint8_t hi, std::uint8_t tensor,
                                          Victim& victim) {
  std::uint8_t* b = block(set);
  std::uint32_t* tags = reinterpret_cast<std::uint32_t*>(b);
  const std::uint32_t way = victim_way(b + rank_off_);
  const std::size_t at = slot(set, way);
  victim.valid = filled(b, way);
  victim.line = victim.valid ? line_of(tags[way], b[hi_off_ + way]) : 0;
  victim.dirty_mask = victim.valid ? dirty_mask(set, way) : 0;
  victim.tensor = tensor_[at];
  tags[way] = lo;
  b[hi_off_ + way] = hi;
  promote(b + rank_off_, way);
  set_valid_mask(set, way, 0);
  set_dirty_mask(set, way, 0);
  tensor_[at] = tensor;
  return way;
}

void SetAssocArray::invalidate(std::uint32_t set, std::uint32_t way) {
  std::uint8_t* b = block(set);
  reinterpret_cast<std::uint32_t*>(b)[way] = 0;
  b[hi_off_ + way] = 0;
  set_valid_mask(set, way, 0);
  set_dirty_mask(set, way, 0);
  tensor_[slot(set, way)] = 0;
  // The way drops to rank 0 (the next victim, below every filled way); the ways ranked below
  // it move up one.
  std::uint8_t* ranks = b + rank_off_;
  const std::uint8_t r = ranks[way];
  for (std::uint32_t i = 0; i < assoc_; ++i)
    if (ranks[i] < r) ++ranks[i];
  ranks[way] = 0;
}

}  // namespace attnsim::engine
