#include "sim/engine/set_assoc_array.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnsim::engine {

SetAssocArray::SetAssocArray(std::uint64_t lines, std::uint32_t ways, std::uint32_t sectors) : wide_(sectors > 8) {
  assoc_ = std::max<std::uint32_t>(1, ways);
  if (assoc_ > kMaxWays)
    throw std::invalid_argument("SetAssocArray: " + std::to_string(ways) + " ways, at most " +
                                std::to_string(kMaxWays));
  padded_ = (assoc_ + 15) / 16 * 16;
  sets_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, lines / assoc_));
  const std::size_t p = padded_;
  rank_off_ = 4 * p;
  hi_off_ = rank_off_ + p;
  valid_off_ = hi_off_ + p;
  const bool packed = sectors <= 4;  // valid and dirty masks in one byte
  dirty_off_ = packed || wide_ ? valid_off_ : valid_off_ + p;
  valid_bits_ = packed ? 0x0f : 0xff;
  dirty_shift_ = packed ? 4 : 0;
  tensor_off_ = dirty_off_ + p;
  stride_ = (tensor_off_ + p + 63) / 64 * 64;
  mem_.resize(static_cast<std::size_t>(sets_) * (stride_ / 64));
  if (wide_) {
    valid64_.resize(static_cast<std::size_t>(sets_) * padded_);
    dirty64_.resize(static_cast<std::size_t>(sets_) * padded_);
  }
  clear();
}

void SetAssocArray::clear() {
  std::fill(mem_.begin(), mem_.end(), Block{});
  std::fill(valid64_.begin(), valid64_.end(), 0);
  std::fill(dirty64_.begin(), dirty64_.end(), 0);
  // Empty ways rank by index, so fills take the first empty way first.
  for (std::uint32_t s = 0; s < sets_; ++s) {
    std::uint8_t* ranks = block(s) + rank_off_;
    for (std::uint32_t i = 0; i < padded_; ++i)
      ranks[i] = static_cast<std::uint8_t>(i < assoc_ ? static_cast<std::int8_t>(i) : kPadRank);
  }
}

void SetAssocArray::invalidate(std::uint32_t set, std::uint32_t way) {
  std::uint8_t* b = block(set);
  reinterpret_cast<std::uint32_t*>(b)[way] = 0;
  b[hi_off_ + way] = 0;
  b[valid_off_ + way] = 0;
  b[dirty_off_ + way] = 0;
  if (wide_) valid64_[wide_slot(set, way)] = 0;
  b[tensor_off_ + way] = 0;
  // The way drops to rank 0 (the next victim, below every filled way); the ways ranked below
  // it move up one.
  std::uint8_t* ranks = b + rank_off_;
  const std::uint8_t r = ranks[way];
  for (std::uint32_t i = 0; i < assoc_; ++i)
    if (ranks[i] < r) ++ranks[i];
  ranks[way] = 0;
}

}  // namespace attnsim::engine
