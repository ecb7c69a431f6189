#include "sim/engine/set_assoc_array.h"

#include <numeric>

namespace attnsim::engine {

namespace {

#if defined(__SSE2__)
// Lane-wise signed minimum (SSE2 has no pminsd).
inline __m128i min_epi32(__m128i a, __m128i b) {
  const __m128i lt = _mm_cmplt_epi32(a, b);
  return _mm_or_si128(_mm_and_si128(lt, a), _mm_andnot_si128(lt, b));
}
#endif

// Index of the first smallest of `n` (a multiple of 16) unsigned stamps.
std::uint32_t first_min(const std::uint32_t* st, std::uint32_t n) {
#if defined(__SSE2__)
  const __m128i flip = _mm_set1_epi32(static_cast<int>(0x80000000u));  // unsigned order via signed compare
  if (n == 16) {  // the presets' associativity: a tree of minimums, no loops
    const __m128i v0 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(st)), flip);
    const __m128i v1 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(st + 4)), flip);
    const __m128i v2 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(st + 8)), flip);
    const __m128i v3 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(st + 12)), flip);
    __m128i m = min_epi32(min_epi32(v0, v1), min_epi32(v2, v3));
    m = min_epi32(m, _mm_shuffle_epi32(m, 0x4e));  // lanes 2,3,0,1
    m = min_epi32(m, _mm_shuffle_epi32(m, 0xb1));  // lanes 1,0,3,2: every lane holds the minimum
    const std::uint32_t eq =
        static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v0, m)))) |
        static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v1, m)))) << 4 |
        static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v2, m)))) << 8 |
        static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v3, m)))) << 12;
    return static_cast<std::uint32_t>(__builtin_ctz(eq));
  }
  __m128i best = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(st)), flip);
  for (std::uint32_t i = 4; i < n; i += 4) {
    const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(st + i)), flip);
    best = min_epi32(v, best);
  }
  alignas(16) std::int32_t lanes[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), best);
  const std::uint32_t lo = std::min(std::min(static_cast<std::uint32_t>(lanes[0]) ^ 0x80000000u,
                                             static_cast<std::uint32_t>(lanes[1]) ^ 0x80000000u),
                                    std::min(static_cast<std::uint32_t>(lanes[2]) ^ 0x80000000u,
                                             static_cast<std::uint32_t>(lanes[3]) ^ 0x80000000u));
  const __m128i key = _mm_set1_epi32(static_cast<int>(lo));
  for (std::uint32_t i = 0;; i += 4) {
    const int m = _mm_movemask_ps(
        _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(st + i)), key)));
    if (m != 0) return i + static_cast<std::uint32_t>(__builtin_ctz(static_cast<unsigned>(m)));
  }
#else
  std::uint32_t way = 0;
  for (std::uint32_t i = 1; i < n; ++i)
    if (st[i] < st[way]) way = i;
  return way;
#endif
}

}  // namespace

SetAssocArray::SetAssocArray(std::uint64_t lines, std::uint32_t ways, bool wide_masks) : wide_(wide_masks) {
  assoc_ = std::max<std::uint32_t>(1, ways);
  padded_ = (assoc_ + 15) / 16 * 16;
  sets_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, lines / assoc_));
  stamp_off_ = 4 * static_cast<std::size_t>(padded_);
  hi_off_ = 8 * static_cast<std::size_t>(padded_);
  valid_off_ = hi_off_ + padded_;
  dirty_off_ = valid_off_ + padded_;
  tensor_off_ = dirty_off_ + padded_;
  stride_ = (tensor_off_ + padded_ + 63) / 64 * 64;
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
  if (padded_ == assoc_) return;
  for (std::uint32_t s = 0; s < sets_; ++s)
    for (std::uint32_t i = assoc_; i < padded_; ++i) stamps(s)[i] = kPadStamp;
}

std::uint32_t SetAssocArray::find_or_insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
                                            bool& hit, Victim& victim) {
  std::uint8_t* b = block(set);
  const std::uint64_t tag = line + 1;
  const std::uint32_t lo = static_cast<std::uint32_t>(tag);
  const std::uint8_t hi = static_cast<std::uint8_t>(tag >> 32);
  std::uint32_t* tags = reinterpret_cast<std::uint32_t*>(b);
  std::uint32_t* st = reinterpret_cast<std::uint32_t*>(b + stamp_off_);
  for (std::uint32_t c = 0; c < padded_; c += 16) {
    for (std::uint32_t m = match16(tags + c, lo); m != 0; m &= m - 1) {
      const std::uint32_t i = c + static_cast<std::uint32_t>(__builtin_ctz(m));
      if (b[hi_off_ + i] == hi) {
        st[i] = next_stamp();
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
  std::uint32_t* st = reinterpret_cast<std::uint32_t*>(b + stamp_off_);
  // The first way with the smallest stamp is the first empty way (stamp 0) if there is one, else
  // the least recently used.
  const std::uint32_t way = first_min(st, padded_);
  victim.valid = st[way] != 0;
  victim.line = victim.valid ? line_of(tags[way], b[hi_off_ + way]) : 0;
  victim.dirty_mask = victim.valid ? dirty_mask(set, way) : 0;
  victim.tensor = b[tensor_off_ + way];
  tags[way] = lo;
  b[hi_off_ + way] = hi;
  st[way] = next_stamp();
  set_valid_mask(set, way, 0);
  set_dirty_mask(set, way, 0);
  b[tensor_off_ + way] = tensor;
  return way;
}

void SetAssocArray::invalidate(std::uint32_t set, std::uint32_t way) {
  std::uint8_t* b = block(set);
  reinterpret_cast<std::uint32_t*>(b)[way] = 0;
  stamps(set)[way] = 0;
  b[hi_off_ + way] = 0;
  set_valid_mask(set, way, 0);
  set_dirty_mask(set, way, 0);
  b[tensor_off_ + way] = 0;
}

void SetAssocArray::renumber() {
  std::vector<std::uint32_t> order(assoc_);
  for (std::uint32_t s = 0; s < sets_; ++s) {
    std::uint32_t* st = stamps(s);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return st[a] < st[b]; });
    std::uint32_t r = 0;
    for (std::uint32_t k = 0; k < assoc_; ++k)
      if (st[order[k]] != 0) st[order[k]] = ++r;  // empty ways keep stamp 0
  }
  clock_ = assoc_ + 1;
}

}  // namespace attnsim::engine
