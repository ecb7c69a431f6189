// The tag store of a set-associative, sectored cache: flat arrays of line tags, valid and dirty
// sector masks, owning tensor and LRU stamps. Functional only (no timing); LRU replacement.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/types.h"

namespace attnsim::engine {

// What an insertion pushed out of the array.
struct Victim {
  std::uint64_t line = 0;       // line number (address / line bytes)
  std::uint8_t dirty_mask = 0;  // dirty sectors that must be written back
  std::uint8_t tensor = 0;
  bool valid = false;
};

class SetAssocArray {
 public:
  static constexpr std::uint32_t kNoWay = 0xffffffffu;

  SetAssocArray() = default;
  // `lines` lines in sets of `ways` (the last set count rounds down; at least one set).
  SetAssocArray(std::uint64_t lines, std::uint32_t ways);

  std::uint32_t set_of(std::uint64_t hash) const {
    return static_cast<std::uint32_t>(((hash & 0xffffffffu) * sets_) >> 32);
  }
  // Way holding `line` in `set`, or kNoWay. Does not touch the LRU state.
  std::uint32_t find(std::uint32_t set, std::uint64_t line) const {
    const std::size_t base = static_cast<std::size_t>(set) * ways_;
    for (std::uint32_t w = 0; w < ways_; ++w)
      if (tag_[base + w] == line + 1) return w;
    return kNoWay;
  }
  void touch(std::uint32_t set, std::uint32_t way) { stamp_[idx(set, way)] = ++clock_; }
  // Installs `line` in `set` (an invalid way first, else the least recently used) and returns
  // the way; `victim` describes what was evicted.
  std::uint32_t insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor, Victim& victim);
  void invalidate(std::uint32_t set, std::uint32_t way);

  std::uint8_t& valid_mask(std::uint32_t set, std::uint32_t way) { return valid_[idx(set, way)]; }
  std::uint8_t& dirty_mask(std::uint32_t set, std::uint32_t way) { return dirty_[idx(set, way)]; }
  std::uint8_t& tensor(std::uint32_t set, std::uint32_t way) { return tensor_[idx(set, way)]; }

  // Calls f(line, dirty_mask, tensor) for every line with dirty sectors, then empties the array.
  template <class F>
  void flush(F&& f) {
    for (std::size_t i = 0; i < tag_.size(); ++i)
      if (tag_[i] != 0 && dirty_[i] != 0) f(tag_[i] - 1, dirty_[i], tensor_[i]);
    std::fill(tag_.begin(), tag_.end(), 0);
    std::fill(valid_.begin(), valid_.end(), 0);
    std::fill(dirty_.begin(), dirty_.end(), 0);
  }

  std::uint32_t sets() const { return sets_; }
  std::uint32_t ways() const { return ways_; }

 private:
  std::size_t idx(std::uint32_t set, std::uint32_t way) const {
    return static_cast<std::size_t>(set) * ways_ + way;
  }
  std::uint32_t sets_ = 0;
  std::uint32_t ways_ = 0;
  std::vector<std::uint64_t> tag_;    // line + 1; 0 = empty
  std::vector<std::uint64_t> stamp_;  // LRU: larger = more recent
  std::vector<std::uint8_t> valid_;
  std::vector<std::uint8_t> dirty_;
  std::vector<std::uint8_t> tensor_;
  std::uint64_t clock_ = 0;
};

}  // namespace attnsim::engine
