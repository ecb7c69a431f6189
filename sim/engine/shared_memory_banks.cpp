#include "sim/engine/shared_memory_banks.h"

#include <algorithm>
#include <vector>

namespace attnsim::engine {

SharedMemoryBanks::SharedMemoryBanks(std::uint32_t banks, core::Bytes bank_bytes)
    : banks_(banks ? banks : 32), bank_bytes_(bank_bytes ? bank_bytes : 4) {}

BankCost SharedMemoryBanks::cost(const core::TileOp& op) {
  for (const auto& e : memo_)
    if (e.used && e.rows == op.rows && e.row_bytes == op.row_bytes && e.pattern == op.pattern) return e.cost;
  Entry& e = memo_[next_];
  next_ = (next_ + 1) % memo_.size();
  e = Entry{op.rows, op.row_bytes, op.pattern, compute(op.rows, op.row_bytes, op.pattern), true};
  return e.cost;
}

BankCost SharedMemoryBanks::compute(std::uint32_t rows, std::uint32_t row_bytes,
                                    core::SmemPattern pattern) const {
  constexpr std::uint64_t kChunk = 16;       // bytes per row per request (ldmatrix: 8 x 16 B)
  constexpr std::uint32_t kRowsPerRequest = 8;
  BankCost out;
  if (rows == 0 || row_bytes == 0) return out;
  const std::uint64_t chunks = (row_bytes + kChunk - 1) / kChunk;
  const std::uint64_t stride = pattern == core::SmemPattern::kPadded ? row_bytes + kChunk : row_bytes;
  const std::uint64_t words_per_chunk = kChunk / bank_bytes_ ? kChunk / bank_bytes_ : 1;
  const std::uint64_t ideal_per_request =
      std::max<std::uint64_t>(1, (kRowsPerRequest * kChunk) / (banks_ * bank_bytes_));
  std::vector<std::uint32_t> hits(banks_);
  for (std::uint32_t r0 = 0; r0 < rows; r0 += kRowsPerRequest) {
    const std::uint32_t nr = std::min(kRowsPerRequest, rows - r0);
    for (std::uint64_t c = 0; c < chunks; ++c) {
      std::fill(hits.begin(), hits.end(), 0);
      for (std::uint32_t i = 0; i < nr; ++i) {
        const std::uint64_t r = r0 + i;
        std::uint64_t col = c;
        if (pattern == core::SmemPattern::kSwizzled) col = (c & ~std::uint64_t{7}) | ((c ^ r) & 7);
        const std::uint64_t addr = r * stride + col * kChunk;
        for (std::uint64_t w = 0; w < words_per_chunk; ++w) ++hits[(addr / bank_bytes_ + w) % banks_];
      }
      const std::uint64_t wf = *std::max_element(hits.begin(), hits.end());
      const std::uint64_t ideal = nr == kRowsPerRequest ? ideal_per_request : 1;
      out.wavefronts += std::max(wf, ideal);
      out.conflicts += wf > ideal ? wf - ideal : 0;
    }
  }
  return out;
}

}  // namespace attnsim::engine
