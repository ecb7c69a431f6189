// The tag store of a set-associative, sectored cache, LRU replacement. Each set is one block of
// host memory in structure-of-arrays form: low tag words, then per-way bytes (LRU rank, valid
// and dirty sector masks, owning tensor). A 16-way set is 128 B, two host cache lines: a lookup
// compares 16 tags at once (SSE2) and a hit updates the ranks in the second line. The high tag
// byte (lines at or above 2^32 - 1, i.e. addresses past 512 GiB with 128-B lines) lives in a
// separate array that is only consulted once such a line has been inserted. Functional only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/core/types.h"

namespace attnsim::engine {

// Set bits of a sector mask, without the library call std::popcount becomes on x86-64 builds
// without -mpopcnt.
inline std::uint32_t sector_count(std::uint8_t mask) {
  std::uint32_t x = mask;
  x = x - ((x >> 1) & 0x55u);
  x = (x & 0x33u) + ((x >> 2) & 0x33u);
  return (x + (x >> 4)) & 0x0fu;
}

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
  // `lines` lines in sets of `ways` (the set count rounds down; at least one set; at most 255
  // ways). Lines are below 2^40 (addresses below 2^47 with 128-B lines).
  SetAssocArray(std::uint64_t lines, std::uint32_t ways);

  std::uint32_t set_of(std::uint64_t hash) const {
    return static_cast<std::uint32_t>(((hash & 0xffffffffu) * sets_) >> 32);
  }
  // Way holding `line` in `set`, or kNoWay. Does not touch the LRU state.
  std::uint32_t find(std::uint32_t set, std::uint64_t line) const {
    const std::uint8_t* b = block(set);
    const std::uint64_t tag = line + 1;
    const std::uint32_t lo = static_cast<std::uint32_t>(tag);
    const std::uint8_t hi = static_cast<std::uint8_t>(tag >> 32);
    if (!any_hi_ && hi != 0) return kNoWay;  // no such line was ever inserted
    for (std::uint32_t c = 0; c < padded_; c += 16) {
      std::uint32_t m = match16(reinterpret_cast<const std::uint32_t*>(b) + c, lo);
      for (; m != 0; m &= m - 1) {
        const std::uint32_t i = c + static_cast<std::uint32_t>(__builtin_ctz(m));
        if (!any_hi_ || (b[rank_off_ + i] != kEmpty && hi_[slot(set, i)] == hi)) return i;
      }
    }
    return kNoWay;
  }
  // One pass: the way holding `line` (touched, `hit` = true), else a new way for it (an empty
  // way first, else the least recently used; `victim` describes what was evicted).
  std::uint32_t find_or_insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor, bool& hit,
                               Victim& victim);
  void prefetch(std::uint32_t set) const {
    const std::uint8_t* b = block(set);
    for (std::size_t o = 0; o < stride_; o += 64) __builtin_prefetch(b + o);
  }
  // Makes `way` (occupied) the most recently used of its set.
  void touch(std::uint32_t set, std::uint32_t way) { promote(block(set), way); }
  void invalidate(std::uint32_t set, std::uint32_t way);

  std::uint8_t& valid_mask(std::uint32_t set, std::uint32_t way) { return block(set)[valid_off_ + way]; }
  std::uint8_t& dirty_mask(std::uint32_t set, std::uint32_t way) { return block(set)[dirty_off_ + way]; }
  std::uint8_t& tensor(std::uint32_t set, std::uint32_t way) { return block(set)[tensor_off_ + way]; }

  // Calls f(line, dirty_mask, tensor) for every line with dirty sectors, then empties the array.
  template <class F>
  void flush(F&& f) {
    for (std::uint32_t s = 0; s < sets_; ++s) {
      const std::uint8_t* b = block(s);
      const std::uint32_t* tags = reinterpret_cast<const std::uint32_t*>(b);
      for (std::uint32_t i = 0; i < assoc_; ++i)
        if (b[rank_off_ + i] != kEmpty && b[dirty_off_ + i] != 0)
          f(line_of(s, i, tags[i]), b[dirty_off_ + i], b[tensor_off_ + i]);
    }
    clear();
  }

  std::uint32_t sets() const { return sets_; }
  std::uint32_t ways() const { return assoc_; }

 private:
  struct alignas(64) Block {  // one host cache line; a set spans stride_ / 64 of them
    std::uint8_t bytes[64];
  };
  // LRU rank of a way: 0 = most recently used ... (occupied ways - 1); kEmpty = no line.
  static constexpr std::uint8_t kEmpty = 0xff;
  // Bit i set where tags[i] == lo, for 16 consecutive ways.
  static std::uint32_t match16(const std::uint32_t* tags, std::uint32_t lo) {
#if defined(__SSE2__)
    const __m128i key = _mm_set1_epi32(static_cast<int>(lo));
    std::uint32_t m = 0;
    for (int q = 0; q < 4; ++q) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + 4 * q));
      m |= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, key)))) << (4 * q);
    }
    return m;
#else
    std::uint32_t m = 0;
    for (int i = 0; i < 16; ++i) m |= static_cast<std::uint32_t>(tags[i] == lo) << i;
    return m;
#endif
  }
  std::size_t slot(std::uint32_t set, std::uint32_t way) const {
    return static_cast<std::size_t>(set) * padded_ + way;
  }
  std::uint64_t line_of(std::uint32_t set, std::uint32_t way, std::uint32_t lo) const {
    const std::uint64_t hi = any_hi_ ? hi_[slot(set, way)] : 0;
    return ((hi << 32) | lo) - 1;
  }
  std::uint8_t* block(std::uint32_t set) {
    return reinterpret_cast<std::uint8_t*>(mem_.data()) + static_cast<std::size_t>(set) * stride_;
  }
  const std::uint8_t* block(std::uint32_t set) const {
    return reinterpret_cast<const std::uint8_t*>(mem_.data()) + static_cast<std::size_t>(set) * stride_;
  }
  // Every occupied way ranked before `way` moves one back; `way` becomes rank 0. With `way`
  // empty (rank kEmpty), every occupied way moves back.
  void promote(std::uint8_t* b, std::uint32_t way);
  void set_hi(std::uint32_t set, std::uint32_t way, std::uint8_t hi);
  void clear();  // every way empty

  std::uint32_t sets_ = 0;
  std::uint32_t assoc_ = 0;
  std::uint32_t padded_ = 0;  // ways rounded up to 16; padding ways stay empty with tag 0 and
                              // are never chosen
  // Byte offsets inside a set's block: tags (u32) at 0, then u8 arrays: LRU rank, valid mask,
  // dirty mask, tensor.
  std::size_t rank_off_ = 0, valid_off_ = 0, dirty_off_ = 0, tensor_off_ = 0, stride_ = 0;
  std::vector<Block> mem_;
  bool any_hi_ = false;           // some line with a non-zero high tag byte was ever inserted
  std::vector<std::uint8_t> hi_;  // high tag bytes, allocated on the first such line
};

}  // namespace attnsim::engine
