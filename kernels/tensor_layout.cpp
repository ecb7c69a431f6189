#include "kernels/tensor_layout.h"

namespace attnsim::kernels {

using core::Bytes;
using core::OpKind;
using core::Tensor;
using core::TileOp;

TensorLayout::TensorLayout(const core::Workload& w) : w_(w), kv_heads_(w.kv_heads ? w.kv_heads : w.heads) {}

std::uint64_t TensorLayout::kv_matrix(std::uint64_t bh) const {
  const std::uint64_t b = bh / w_.heads, h = bh % w_.heads;
  return b * kv_heads_ + h / (w_.heads / kv_heads_);
}

TileOp TensorLayout::tile(OpKind kind, Tensor t, std::uint64_t matrix, std::uint64_t mat_rows, std::uint64_t mat_cols,
                          Bytes elem, std::uint64_t row0, std::uint64_t rows, std::uint64_t col0, std::uint64_t cols,
                          bool async) {
  TileOp op;
  op.kind = kind;
  op.tensor = t;
  op.async = async;
  op.rows = static_cast<std::uint32_t>(rows);
  op.row_bytes = static_cast<std::uint32_t>(cols * elem);
  op.row_stride = mat_cols * elem;
  op.addr = base(t) + ((matrix * mat_rows + row0) * mat_cols + col0) * elem;
  return op;
}

TileOp TensorLayout::q_rows(OpKind kind, Tensor t, std::uint64_t bh, std::uint64_t row0, std::uint64_t rows,
                            bool async) const {
  return tile(kind, t, bh, w_.seq_q, w_.head_dim, w_.value_bytes(), row0, rows, 0, w_.head_dim, async);
}

TileOp TensorLayout::kv_rows(OpKind kind, Tensor t, std::uint64_t bh, std::uint64_t row0, std::uint64_t rows,
                             bool async) const {
  return tile(kind, t, kv_matrix(bh), w_.seq_kv, w_.head_dim, w_.value_bytes(), row0, rows, 0, w_.head_dim, async);
}

TileOp TensorLayout::grad_kv_rows(OpKind kind, Tensor t, std::uint64_t bh, std::uint64_t row0,
                                  std::uint64_t rows) const {
  return tile(kind, t, bh, w_.seq_kv, w_.head_dim, w_.value_bytes(), row0, rows, 0, w_.head_dim);
}

TileOp TensorLayout::stat_rows(OpKind kind, Tensor t, std::uint64_t bh, std::uint64_t row0,
                               std::uint64_t rows) const {
  return tile(kind, t, bh, 1, w_.seq_q, kFp32, 0, 1, row0, rows);
}

TileOp TensorLayout::acc_rows(OpKind kind, Tensor t, std::uint64_t bh, std::uint64_t row0, std::uint64_t rows) const {
  return tile(kind, t, bh, w_.seq_q, w_.head_dim, kFp32, row0, rows, 0, w_.head_dim);
}

TileOp TensorLayout::mma(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  TileOp op;
  op.kind = OpKind::kMma;
  op.m = static_cast<std::uint32_t>(m);
  op.n = static_cast<std::uint32_t>(n);
  op.k = static_cast<std::uint32_t>(k);
  return op;
}

TileOp TensorLayout::count_op(OpKind kind, std::uint64_t count) {
  TileOp op;
  op.kind = kind;
  op.count = count;
  return op;
}

TileOp TensorLayout::simple(OpKind kind) {
  TileOp op;
  op.kind = kind;
  return op;
}

TileOp TensorLayout::barrier_op(OpKind kind, std::uint8_t barrier, std::uint64_t count, std::uint32_t tx) {
  TileOp op = count_op(kind, count);
  op.barrier = barrier;
  op.tx_bytes = tx;
  return op;
}

TileOp TensorLayout::bulk(TileOp op, std::uint8_t barrier) {
  op.bulk = true;
  op.async = true;
  op.barrier = barrier;
  return op;
}

TileOp TensorLayout::shared(OpKind kind, Tensor t, std::uint64_t rows, Bytes row_bytes, core::SmemPattern pattern) {
  TileOp op;
  op.kind = kind;
  op.tensor = t;
  op.pattern = pattern;
  op.rows = static_cast<std::uint32_t>(rows);
  op.row_bytes = static_cast<std::uint32_t>(row_bytes);
  return op;
}

}  // namespace attnsim::kernels
