// The tag store of a set-associative, sectored cache, LRU replacement. Each set is one block of
// host memory in structure-of-arrays form: low tag words, then per way the LRU rank, the high
// tag byte, the sector masks and the owning tensor (128 B for 16 ways with masks of up to 4
// sectors, valid and dirty packed in one byte: a fill touches two 64-B host lines and nothing
// else). Masks of 5-8 sectors take a byte each (a 192-B block); wider masks live in two arrays
// outside the blocks (the block model), with a dirty flag per way in the block.
// LRU as ranks: the real ways of a set hold a permutation of 0..ways-1, ways-1 the most
// recently used, 0 the victim (an empty way while there is one: empty ways rank below every
// filled one). A touch, fill or invalidation is a few byte-vector operations, with no global
// clock to renumber. At most kMaxWays ways. Functional only (no timing).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/core/types.h"

namespace attnsim::engine {

// Set bits of a sector mask, without the library call std::popcount becomes on x86-64 builds
// without -mpopcnt: a table for the line model's masks (4 sectors; up to 8), else bit arithmetic.
inline std::uint32_t sector_count(std::uint64_t x) {
  // Nibble i of kPop4 is the number of set bits of i.
  constexpr std::uint64_t kPop4 = 0x4332322132212110ull;
  if (x < 16) return static_cast<std::uint32_t>(kPop4 >> (4 * x)) & 0xf;
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<std::uint32_t>((x * 0x0101010101010101ull) >> 56);
}

// What an insertion pushed out of the array.
struct Victim {
  std::uint64_t line = 0;       // line number (address / line bytes)
  std::uint64_t dirty_mask = 0;  // dirty sectors that must be written back
  std::uint8_t tensor = 0;
  bool valid = false;
};

class SetAssocArray {
 public:
  static constexpr std::uint32_t kNoWay = 0xffffffffu;
  static constexpr std::uint32_t kMaxWays = 128;  // ranks are signed bytes

  SetAssocArray() = default;
  // `lines` lines in sets of `ways` (1..kMaxWays, else std::invalid_argument; the set count
  // rounds down; at least one set). Lines are below 2^40 (addresses below 2^47 with 128-B
  // lines). Sector masks have `sectors` bits: up to 4 packed in one byte with the dirty mask, up
  // to 8 in a byte each, more in 64-bit arrays outside the set blocks (the block model of
  // l2.tracking_bytes).
  SetAssocArray(std::uint64_t lines, std::uint32_t ways, std::uint32_t sectors = 4);

  std::uint32_t set_of(std::uint64_t hash) const {
    return static_cast<std::uint32_t>(((hash & 0xffffffffu) * sets_) >> 32);
  }
  // Way holding `line` in `set`, or kNoWay. Does not touch the LRU state.
  std::uint32_t find(std::uint32_t set, std::uint64_t line) const {
    const std::uint8_t* b = block(set);
    const std::uint64_t tag = line + 1;
    const std::uint8_t hi = static_cast<std::uint8_t>(tag >> 32);
    for (std::uint32_t c = 0; c < padded_; c += 16) {
      std::uint32_t m = match16(reinterpret_cast<const std::uint32_t*>(b) + c, static_cast<std::uint32_t>(tag));
      for (; m != 0; m &= m - 1) {
        const std::uint32_t i = c + static_cast<std::uint32_t>(__builtin_ctz(m));
        if (b[hi_off_ + i] == hi) return i;
      }
    }
    return kNoWay;
  }
  // One pass: the way holding `line` (touched, `hit` = true), else a new way for it (an empty
  // way first, else the least recently used; `victim` describes what was evicted).
  [[gnu::always_inline]] std::uint32_t find_or_insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
                                                      bool& hit, Victim& victim);
  // The miss half of find_or_insert, for a caller that knows `line` is not in `set`.
  [[gnu::always_inline]] std::uint32_t insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
                                              Victim& victim);
  void prefetch(std::uint32_t set) const {
    const std::uint8_t* b = block(set);
    for (std::size_t o = 0; o < stride_; o += 64) __builtin_prefetch(b + o);
    if (wide_) {  // the set's 64-bit sector masks (valid: read on every access; dirty: a dirty victim's)
      const std::size_t first = wide_slot(set, 0);
      for (std::size_t i = 0; i < padded_; i += 8) {
        __builtin_prefetch(&valid64_[first + i]);
        __builtin_prefetch(&dirty64_[first + i]);
      }
    }
  }
  // Makes `way` the set's most recently used.
  void touch(std::uint32_t set, std::uint32_t way) { promote(block(set) + rank_off_, way); }
  void invalidate(std::uint32_t set, std::uint32_t way);

  // Narrow masks: the valid mask is the byte at valid_off_ under valid_bits_, the dirty mask the
  // byte at dirty_off_ shifted down by dirty_shift_ (packed: the same byte, low and high nibble).
  std::uint64_t valid_mask(std::uint32_t set, std::uint32_t way) const {
    return wide_ ? valid64_[wide_slot(set, way)] : block(set)[valid_off_ + way] & valid_bits_;
  }
  std::uint64_t dirty_mask(std::uint32_t set, std::uint32_t way) const {
    const std::uint8_t d = block(set)[dirty_off_ + way];
    return wide_ ? (d != 0 ? dirty64_[wide_slot(set, way)] : 0) : d >> dirty_shift_;
  }
  void set_valid_mask(std::uint32_t set, std::uint32_t way, std::uint64_t m) {
    if (wide_) {
      valid64_[wide_slot(set, way)] = m;
    } else {
      std::uint8_t& b = block(set)[valid_off_ + way];
      b = static_cast<std::uint8_t>((b & ~valid_bits_) | m);
    }
  }
  void set_dirty_mask(std::uint32_t set, std::uint32_t way, std::uint64_t m) {
    if (wide_) {
      // The set's block keeps a dirty flag per way, so that a clean victim (most of them) costs
      // no load from the wide array; the wide mask is stale while the flag is clear.
      block(set)[dirty_off_ + way] = m != 0;
      if (m != 0) dirty64_[wide_slot(set, way)] = m;
    } else {
      std::uint8_t& b = block(set)[dirty_off_ + way];
      b = static_cast<std::uint8_t>((b & ~(valid_bits_ << dirty_shift_)) | (m << dirty_shift_));
    }
  }
  std::uint8_t& tensor(std::uint32_t set, std::uint32_t way) { return block(set)[tensor_off_ + way]; }

  // Calls f(line, dirty_mask, tensor) for every line with dirty sectors, then empties the array.
  template <class F>
  void flush(F&& f) {
    for (std::uint32_t s = 0; s < sets_; ++s) {
      const std::uint8_t* b = block(s);
      const std::uint32_t* tags = reinterpret_cast<const std::uint32_t*>(b);
      for (std::uint32_t i = 0; i < assoc_; ++i)
        if (filled(b, i) && dirty_mask(s, i) != 0)
          f(line_of(tags[i], b[hi_off_ + i]), dirty_mask(s, i), b[tensor_off_ + i]);
    }
    clear();
  }

  std::uint32_t sets() const { return sets_; }
  std::uint32_t ways() const { return assoc_; }
  // Ways holding no line, in the sets whose index is a multiple of `stride` (a power of two).
  std::uint64_t empty_ways(std::uint32_t stride) const {
    std::uint64_t n = 0;
    for (std::uint32_t s = 0; s < sets_; s += stride)
      for (std::uint32_t i = 0; i < assoc_; ++i) n += filled(block(s), i) ? 0 : 1;
    return n;
  }

 private:
  struct alignas(64) Block {  // one host cache line; a set spans stride_ / 64 of them
    std::uint8_t bytes[64];
  };
  static constexpr std::int8_t kPadRank = -1;  // padding ways: never the victim, never moved
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
  std::size_t wide_slot(std::uint32_t set, std::uint32_t way) const {  // in valid64_ / dirty64_
    return static_cast<std::size_t>(set) * padded_ + way;
  }
  static std::uint64_t line_of(std::uint32_t lo, std::uint8_t hi) {
    return ((static_cast<std::uint64_t>(hi) << 32) | lo) - 1;
  }
  std::uint8_t* block(std::uint32_t set) {
    return reinterpret_cast<std::uint8_t*>(mem_.data()) + static_cast<std::size_t>(set) * stride_;
  }
  const std::uint8_t* block(std::uint32_t set) const {
    return reinterpret_cast<const std::uint8_t*>(mem_.data()) + static_cast<std::size_t>(set) * stride_;
  }
  // A way is filled when its tag words are not both 0 (a tag is line + 1).
  bool filled(const std::uint8_t* b, std::uint32_t way) const {
    return reinterpret_cast<const std::uint32_t*>(b)[way] != 0 || b[hi_off_ + way] != 0;
  }
  // The way of rank 0: an empty way while there is one (the first, after a clear), else the
  // least recently used.
  std::uint32_t victim_way(const std::uint8_t* ranks) const {
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (std::uint32_t c = 0;; c += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ranks + c));
      const int m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, zero));
      if (m != 0) return c + static_cast<std::uint32_t>(__builtin_ctz(static_cast<unsigned>(m)));
    }
#else
    for (std::uint32_t i = 0;; ++i)
      if (ranks[i] == 0) return i;
#endif
  }
  // Moves `way` to the top rank: every way ranked above it moves down one.
  void promote(std::uint8_t* ranks, std::uint32_t way) const {
    const std::int8_t r = static_cast<std::int8_t>(ranks[way]);
    const std::int8_t top = static_cast<std::int8_t>(assoc_ - 1);
    if (r == top) return;
#if defined(__SSE2__)
    const __m128i key = _mm_set1_epi8(r);
    for (std::uint32_t c = 0; c < padded_; c += 16) {
      __m128i* p = reinterpret_cast<__m128i*>(ranks + c);
      const __m128i v = _mm_loadu_si128(p);
      _mm_storeu_si128(p, _mm_add_epi8(v, _mm_cmpgt_epi8(v, key)));  // -1 where above r
    }
#else
    for (std::uint32_t i = 0; i < padded_; ++i)
      if (static_cast<std::int8_t>(ranks[i]) > r) --ranks[i];
#endif
    ranks[way] = static_cast<std::uint8_t>(top);
  }
  // Puts the line with tag words (lo, hi) into the set's victim way.
  [[gnu::always_inline]] std::uint32_t place(std::uint32_t set, std::uint32_t lo, std::uint8_t hi,
                                             std::uint8_t tensor, Victim& victim);
  void clear();  // every way empty

  std::uint32_t sets_ = 0;
  std::uint32_t assoc_ = 0;
  std::uint32_t padded_ = 0;  // ways rounded up to 16; padding ways never match (tag 0) and
                              // are never chosen (rank kPadRank)
  // Byte offsets inside a set's block: tags (u32) at 0, then u8 arrays: LRU rank (kPadRank on
  // padding ways), high tag byte, then the masks: up to 4 sectors one byte (valid in the low
  // nibble, dirty in the high one: valid_off_ == dirty_off_), up to 8 a valid and a dirty byte,
  // wide masks a dirty flag (mask != 0; valid_off_ == dirty_off_, its valid bits unused); then
  // the owning tensor.
  std::size_t rank_off_ = 0, hi_off_ = 0, valid_off_ = 0, dirty_off_ = 0, tensor_off_ = 0, stride_ = 0;
  std::uint32_t valid_bits_ = 0xff;  // narrow masks: the valid mask's bits of its byte
  std::uint32_t dirty_shift_ = 0;    // narrow masks: where the dirty mask starts in its byte
  std::vector<Block> mem_;
  bool wide_ = false;  // 64-bit sector masks in the two arrays below
  std::vector<std::uint64_t> valid64_, dirty64_;
};

// The hot paths, inline: every L2 and L1 access runs one of them.
inline std::uint32_t SetAssocArray::find_or_insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
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

inline std::uint32_t SetAssocArray::insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
                                           Victim& victim) {
  const std::uint64_t tag = line + 1;
  return place(set, static_cast<std::uint32_t>(tag), static_cast<std::uint8_t>(tag >> 32), tensor, victim);
}

inline std::uint32_t SetAssocArray::place(std::uint32_t set, std::uint32_t lo, std::uint8_t hi, std::uint8_t tensor,
                                          Victim& victim) {
  std::uint8_t* b = block(set);
  std::uint32_t* tags = reinterpret_cast<std::uint32_t*>(b);
  const std::uint32_t way = victim_way(b + rank_off_);
  victim.valid = filled(b, way);
  victim.line = victim.valid ? line_of(tags[way], b[hi_off_ + way]) : 0;
  victim.dirty_mask = victim.valid ? dirty_mask(set, way) : 0;
  victim.tensor = b[tensor_off_ + way];
  tags[way] = lo;
  b[hi_off_ + way] = hi;
  promote(b + rank_off_, way);
  b[valid_off_ + way] = 0;  // every mask (and the wide masks' dirty flag) empty
  b[dirty_off_ + way] = 0;
  if (wide_) valid64_[wide_slot(set, way)] = 0;
  b[tensor_off_ + way] = tensor;
  return way;
}

}  // namespace attnsim::engine
