// A paged K/V cache: each sequence's tokens in pages of page_size tokens found through a block
// table, every page one [kv_heads, page_size, head_dim] range of a pool; the K/V loads that read it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/tile_op.h"
#include "sim/core/workload.h"

namespace attnsim::kernels {

class PagedKv {
 public:
  // `w`: the resolved workload with page_size > 0 (batch, kv_heads, head_dim, dtype, lengths).
  explicit PagedKv(const core::Workload& w);

  // The pool page that holds logical page `page` of sequence `b` (the block table's entry).
  std::uint64_t physical_page(std::uint64_t b, std::uint64_t page) const { return table_[first_[b] + page]; }
  std::uint64_t pool_pages() const { return table_.size(); }

  // Appends the loads (or stores) of tokens [row0, row0 + rows) of sequence `b`, KV head `g`:
  // one 2-D tile op per page the rows touch, each at its page's address in tensor `t`.
  void append_rows(std::vector<core::TileOp>& out, core::OpKind kind, core::Tensor t, std::uint64_t b,
                   std::uint64_t g, std::uint64_t row0, std::uint64_t rows, bool async) const;

 private:
  std::uint64_t page_size_, kv_heads_;
  core::Bytes row_bytes_;
  std::vector<std::uint64_t> first_;  // per sequence: its first entry in table_
  std::vector<std::uint32_t> table_;  // per (sequence, logical page), in sequence order: the pool page
};

}  // namespace attnsim::kernels
