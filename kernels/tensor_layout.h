// Global byte addresses of the attention tensors and builders for the tile ops that touch them.
// Every tensor lives in its own 1 TiB-aligned range, row-major [batch, heads, rows, cols]; no padding.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/tile_op.h"
#include "sim/core/workload.h"

namespace attnsim::kernels {

class TensorLayout {
 public:
  explicit TensorLayout(const core::Workload& w);

  static core::Bytes base(core::Tensor t) { return core::tensor_base(t); }

  // Matrix index of query head `bh` (= b*heads + h) in a per-KV-head tensor (K, V): GQA/MQA.
  std::uint64_t kv_matrix(std::uint64_t bh) const;

  // A 2-D tile of matrix `matrix` (of `mat_rows` x `mat_cols` elements of `elem` bytes):
  // rows [row0, row0+rows), columns [col0, col0+cols).
  static core::TileOp tile(core::OpKind kind, core::Tensor t, std::uint64_t matrix, std::uint64_t mat_rows,
                           std::uint64_t mat_cols, core::Bytes elem, std::uint64_t row0, std::uint64_t rows,
                           std::uint64_t col0, std::uint64_t cols, bool async = false);

  // Rows [row0, row0+rows) of a [batch, heads, seq, head_dim] tensor in the workload dtype:
  // Q, O, dO, dQ (seq_q rows, query head `bh`), dK, dV (seq_kv rows, written per query head).
  core::TileOp q_rows(core::OpKind kind, core::Tensor t, std::uint64_t bh, std::uint64_t row0, std::uint64_t rows,
                      bool async = false) const;
  core::TileOp kv_rows(core::OpKind kind, core::Tensor t, std::uint64_t bh, std::uint64_t row0, std::uint64_t rows,
                       bool async = false) const;  // K, V of the KV head query head `bh` reads
  core::TileOp grad_kv_rows(core::OpKind kind, core::Tensor t, std::uint64_t bh, std::uint64_t row0,
                            std::uint64_t rows) const;  // dK, dV: [batch, heads, seq_kv, d]
  // fp32 per-row statistics (m, ℓ, LSE, Delta): [batch, heads, seq_q], one row of `rows` values.
  core::TileOp stat_rows(core::OpKind kind, core::Tensor t, std::uint64_t bh, std::uint64_t row0,
                         std::uint64_t rows) const;
  // fp32 [batch, heads, seq_q, head_dim] rows (dQ_accum).
  core::TileOp acc_rows(core::OpKind kind, core::Tensor t, std::uint64_t bh, std::uint64_t row0,
                        std::uint64_t rows) const;

  static core::TileOp mma(std::uint64_t m, std::uint64_t n, std::uint64_t k);
  static core::TileOp count_op(core::OpKind kind, std::uint64_t count);  // kExp, kElementwise, kWait
  static core::TileOp simple(core::OpKind kind);                          // kBarrier, kCommit
  // An mbarrier op (kMbarArrive, kMbarWait, kNamedArrive, kNamedSync) on barrier `barrier`: its
  // arrival count, phase or thread count, and for an arrive the transaction bytes it expects.
  static core::TileOp barrier_op(core::OpKind kind, std::uint8_t barrier, std::uint64_t count = 0,
                                 std::uint32_t tx = 0);
  // `op` as a TMA bulk copy (async, not under the load credits) completing on mbarrier `barrier`.
  static core::TileOp bulk(core::TileOp op, std::uint8_t barrier);
  static core::TileOp shared(core::OpKind kind, core::Tensor t, std::uint64_t rows, core::Bytes row_bytes,
                             core::SmemPattern pattern = core::SmemPattern::kSwizzled);

  static constexpr core::Bytes kFp32 = 4;

 private:
  core::Workload w_;
  std::uint64_t kv_heads_;
};

}  // namespace attnsim::kernels
