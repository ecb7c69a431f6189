// The block table of a paged K/V cache (contiguous or shuffled pool pages) and its per-page tile loads.
#include "kernels/paged_kv.h"

#include <algorithm>
#include <limits>

#include "kernels/tensor_layout.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

PagedKv::PagedKv(const core::Workload& w)
    : page_size_(w.page_size),
      kv_heads_(w.kv_heads ? w.kv_heads : w.heads),
      row_bytes_(w.head_dim * w.value_bytes()) {
  const std::vector<std::uint64_t> lengths = core::sequence_kv_lengths(w);
  first_.reserve(lengths.size());
  std::uint64_t pages = 0;
  for (std::uint64_t n : lengths) {
    first_.push_back(pages);
    pages += core::ceil_div(n, page_size_);
  }
  if (pages > std::numeric_limits<std::uint32_t>::max())
    throw core::ConfigError(core::ConfigProblem{"", 0, "page_size",
                                                "the block table would hold " + std::to_string(pages) +
                                                    " pages; at most 2^32 - 1 are modelled (use larger pages)"});
  // Contiguous placement: the pool pages in sequence order. Shuffled: a Fisher-Yates permutation
  // of them drawn with SplitMix64(page_seed), a fragmented pool after many allocations and frees.
  table_.resize(pages);
  for (std::uint64_t i = 0; i < pages; ++i) table_[i] = static_cast<std::uint32_t>(i);
  if (w.page_placement == core::PagePlacement::kShuffled) {
    std::uint64_t state = w.page_seed;
    for (std::uint64_t i = pages; i > 1; --i) std::swap(table_[i - 1], table_[core::splitmix64(state) % i]);
  }
}

void PagedKv::append_rows(std::vector<core::TileOp>& out, core::OpKind kind, core::Tensor t, std::uint64_t b,
                          std::uint64_t g, std::uint64_t row0, std::uint64_t rows, bool async) const {
  const std::uint64_t end = row0 + rows;
  for (std::uint64_t r = row0; r < end;) {
    const std::uint64_t page = r / page_size_, in_page = r - page * page_size_;
    const std::uint64_t n = std::min(end - r, page_size_ - in_page);
    // Pool page p holds [kv_heads, page_size, d]: KV head g's rows of it are one contiguous range.
    core::TileOp op;
    op.kind = kind;
    op.tensor = t;
    op.async = async;
    op.rows = static_cast<std::uint32_t>(n);
    op.row_bytes = static_cast<std::uint32_t>(row_bytes_);
    op.row_stride = row_bytes_;
    op.addr = TensorLayout::base(t) + ((physical_page(b, page) * kv_heads_ + g) * page_size_ + in_page) * row_bytes_;
    out.push_back(op);
    r += n;
  }
}

}  // namespace attnsim::kernels
