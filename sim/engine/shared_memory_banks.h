// Shared-memory bank conflicts of a tile access, counted as wavefronts (Nsight Compute's
// l1tex__data_pipe_lsu_wavefronts_mem_shared): 32 banks x 4 bytes; no broadcast, no latency.
// Model: a tile of `rows` rows of `row_bytes` is accessed as ldmatrix does, one request per
// (group of 8 rows, 16-B column chunk): 8 rows x 16 B = 128 B, ideally one wavefront. Row r's
// chunk c sits at byte  kRowMajor: r*row_bytes + 16c;  kPadded: r*(row_bytes+16) + 16c;
// kSwizzled: r*row_bytes + 16*(c XOR (r mod 8)) within each 128-B segment (the CUTLASS/Triton
// swizzle). A request needs as many wavefronts as the most-used bank has distinct words; the
// excess over one per request is the bank-conflict count. So row-major rows whose length is a
// multiple of 128 B put all 8 rows on the same 4 banks: 8 wavefronts, 7 conflicts.
#pragma once

#include <array>
#include <cstdint>

#include "sim/core/tile_op.h"

namespace attnsim::engine {

struct BankCost {
  std::uint64_t wavefronts = 0;
  std::uint64_t conflicts = 0;  // wavefronts beyond the conflict-free count
};

class SharedMemoryBanks {
 public:
  SharedMemoryBanks(std::uint32_t banks, core::Bytes bank_bytes);
  // Cost of a kSharedRead/kSharedWrite; memoised on (rows, row_bytes, pattern).
  BankCost cost(const core::TileOp& op);
  // The bytes one wavefront moves when every bank serves one word (32 x 4 B on NVIDIA GPUs).
  core::Bytes wavefront_bytes() const { return banks_ * bank_bytes_; }

 private:
  BankCost compute(std::uint32_t rows, std::uint32_t row_bytes, core::SmemPattern pattern) const;
  struct Entry {
    std::uint32_t rows = 0, row_bytes = 0;
    core::SmemPattern pattern = core::SmemPattern::kRowMajor;
    BankCost cost;
    bool used = false;
  };
  std::uint32_t banks_;
  core::Bytes bank_bytes_;
  std::array<Entry, 16> memo_{};
  std::uint32_t next_ = 0;
};

}  // namespace attnsim::engine
