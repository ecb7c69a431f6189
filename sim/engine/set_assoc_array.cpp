#include "sim/engine/set_assoc_array.h"

namespace attnsim::engine {

SetAssocArray::SetAssocArray(std::uint64_t lines, std::uint32_t ways) {
  assoc_ = std::clamp<std::uint32_t>(ways, 1, 255);
  padded_ = (assoc_ + 15) / 16 * 16;
  sets_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, lines / assoc_));
  rank_off_ = 4 * static_cast<std::size_t>(padded_);
  valid_off_ = rank_off_ + padded_;
  dirty_off_ = valid_off_ + padded_;
  tensor_off_ = dirty_off_ + padded_;
  stride_ = (tensor_off_ + padded_ + 63) / 64 * 64;
  mem_.resize(static_cast<std::size_t>(sets_) * (stride_ / 64));
  clear();
}

void SetAssocArray::clear() {
  std::fill(mem_.begin(), mem_.end(), Block{});
  for (std::uint32_t s = 0; s < sets_; ++s) std::memset(block(s) + rank_off_, kEmpty, padded_);
  if (any_hi_) std::fill(hi_.begin(), hi_.end(), std::uint8_t{0});
}

void SetAssocArray::promote(std::uint8_t* b, std::uint32_t way) {
  std::uint8_t* rank = b + rank_off_;
  const std::uint8_t r = rank[way];
#if defined(__SSE2__)
  // Unsigned byte compare via the sign flip; kEmpty (0xff) is never below r.
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  const __m128i key = _mm_xor_si128(_mm_set1_epi8(static_cast<char>(r)), flip);
  for (std::uint32_t c = 0; c < padded_; c += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rank + c));
    const __m128i below = _mm_cmplt_epi8(_mm_xor_si128(v, flip), key);  // 0xff where rank < r
    v = _mm_sub_epi8(v, below);                                          // +1 there
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rank + c), v);
  }
#else
  for (std::uint32_t i = 0; i < padded_; ++i)
    if (rank[i] < r) ++rank[i];
#endif
  rank[way] = 0;
}

void SetAssocArray::set_hi(std::uint32_t set, std::uint32_t way, std::uint8_t hi) {
  if (!any_hi_) {
    if (hi == 0) return;
    hi_.assign(static_cast<std::size_t>(sets_) * padded_, 0);
    any_hi_ = true;
  }
  hi_[slot(set, way)] = hi;
}

std::uint32_t SetAssocArray::find_or_insert(std::uint32_t set, std::uint64_t line, std::uint8_t tensor,
                                            bool& hit, Victim& victim) {
  std::uint8_t* b = block(set);
  const std::uint32_t found = find(set, line);
  if (found != kNoWay) {
    promote(b, found);
    hit = true;
    return found;
  }
  // Miss: the first empty way if there is one, else the least recently used (rank assoc - 1:
  // a full set's ranks are 0 .. assoc - 1).
  const std::uint8_t* rank = b + rank_off_;
  std::uint32_t way = kNoWay;
  for (std::uint32_t i = 0; i < assoc_ && way == kNoWay; ++i)
    if (rank[i] == kEmpty) way = i;
  if (way == kNoWay)
    for (std::uint32_t i = 0; i < assoc_; ++i)
      if (rank[i] == assoc_ - 1) {
        way = i;
        break;
      }
  std::uint32_t* tags = reinterpret_cast<std::uint32_t*>(b);
  hit = false;
  victim.valid = rank[way] != kEmpty;
  victim.line = victim.valid ? line_of(set, way, tags[way]) : 0;
  victim.dirty_mask = victim.valid ? b[dirty_off_ + way] : 0;
  victim.tensor = b[tensor_off_ + way];
  const std::uint64_t tag = line + 1;
  tags[way] = static_cast<std::uint32_t>(tag);
  set_hi(set, way, static_cast<std::uint8_t>(tag >> 32));
  promote(b, way);
  b[valid_off_ + way] = 0;
  b[dirty_off_ + way] = 0;
  b[tensor_off_ + way] = tensor;
  return way;
}

void SetAssocArray::invalidate(std::uint32_t set, std::uint32_t way) {
  std::uint8_t* b = block(set);
  std::uint8_t* rank = b + rank_off_;
  const std::uint8_t r = rank[way];
  if (r != kEmpty)
    for (std::uint32_t i = 0; i < padded_; ++i)
      if (rank[i] != kEmpty && rank[i] > r) --rank[i];
  reinterpret_cast<std::uint32_t*>(b)[way] = 0;
  rank[way] = kEmpty;
  set_hi(set, way, 0);
  b[valid_off_ + way] = 0;
  b[dirty_off_ + way] = 0;
  b[tensor_off_ + way] = 0;
}

}  // namespace attnsim::engine
