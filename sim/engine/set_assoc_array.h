// The tag store of a set-associative, sectored cache: per set, contiguous (tag, LRU stamp) ways
// so a lookup touches one or two host cache lines; valid/dirty sector masks and owning tensor
// in side arrays. Functional only (no timing); LRU replacement.
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
  // `lines` lines in sets of `ways` (the set count rounds down; at least one set).
  SetAssocArray(std::uint64_t lines, std::uint32_t ways);

  std::uint32_t set_of(std::uint64_t hash) const {
    return static_cast<std::uint32_t>(((hash & 0xffffffffu) * sets_) >> 32);
  }
  // Way holding `line` in `set`, or kNoWay. Does not touch the LRU state.
  std::uint32_t find(std::uint32_t set, std::uint64_t line) const {
    const Way* w = &ways_[static_cast<std::size_t>(set) * assoc_];
    const std::uint64_t tag = line + 1;
    for (std::uint32_t i = 0; i < assoc_; ++i)
      if (w[i].tag == tag) return i;
    return kNoWay;
  }
  // One pass: the way holding `line` (touched, `hit` = true), else a new way for it (an empty
  // way first, else the least recently used; `victim` describes what was evicted).
  std::uint32_t find_or_insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor, bool& hit,
                               Victim& victim);
  void prefetch(std::uint32_t set) const {
    const char* p = reinterpret_cast<const char*>(&ways_[static_cast<std::size_t>(set) * assoc_]);
    for (std::size_t b = 0; b < sizeof(Way) * assoc_; b += 64) __builtin_prefetch(p + b);
  }
  void touch(std::uint32_t set, std::uint32_t way) {
    ways_[static_cast<std::size_t>(set) * assoc_ + way].stamp = next_stamp();
  }
  void invalidate(std::uint32_t set, std::uint32_t way);

  std::uint8_t& valid_mask(std::uint32_t set, std::uint32_t way) { return ways_[idx(set, way)].valid; }
  std::uint8_t& dirty_mask(std::uint32_t set, std::uint32_t way) { return ways_[idx(set, way)].dirty; }
  std::uint8_t& tensor(std::uint32_t set, std::uint32_t way) { return ways_[idx(set, way)].tensor; }

  // Calls f(line, dirty_mask, tensor) for every line with dirty sectors, then empties the array.
  template <class F>
  void flush(F&& f) {
    for (const Way& w : ways_)
      if (w.tag != 0 && w.dirty != 0) f(static_cast<std::uint64_t>(w.tag) - 1, w.dirty, w.tensor);
    std::fill(ways_.begin(), ways_.end(), Way{});
  }

  std::uint32_t sets() const { return sets_; }
  std::uint32_t ways() const { return assoc_; }

 private:
  struct Way {  // 16 bytes: a 16-way set is four adjacent host cache lines
    std::uint64_t tag : 40 = 0;    // line + 1 (addresses below 2^47); 0 = empty
    std::uint64_t stamp : 24 = 0;  // LRU: larger = more recent
    std::uint8_t valid = 0;        // sector masks
    std::uint8_t dirty = 0;
    std::uint8_t tensor = 0;
  };
  static constexpr std::uint32_t kMaxStamp = (1u << 24) - 1;
  std::size_t idx(std::uint32_t set, std::uint32_t way) const {
    return static_cast<std::size_t>(set) * assoc_ + way;
  }
  std::uint32_t next_stamp() {
    if (clock_ == kMaxStamp) renumber();
    return ++clock_;
  }
  void renumber();  // keeps each set's LRU order, restarts the clock

  std::uint32_t sets_ = 0;
  std::uint32_t assoc_ = 0;
  std::vector<Way> ways_;
  std::uint32_t clock_ = 0;
};

}  // namespace attnsim::engine
