// Reference attention numerics: textbook softmax(q·Kᵀ)·V and the online (one-pass, blocked)
// softmax of FlashAttention, in double with optional emulated storage precision; no scaling, no mask.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/precision.h"
#include "sim/core/types.h"

namespace attnsim::kernels {

using Vector = std::vector<double>;

// A dense row-major matrix of doubles (rows = sequence positions, cols = head dimension).
struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> values;

  Matrix() = default;
  Matrix(std::size_t r, std::size_t c, double fill = 0.0) : rows(r), cols(c), values(r * c, fill) {}
  double& operator()(std::size_t r, std::size_t c) { return values[r * cols + c]; }
  double operator()(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
  Vector row(std::size_t r) const;
};

// Attention of one query q (length d) over keys K (n x d) and values V (n x d_v):
// o = Σ_j softmax(s)_j v_j with s_j = q·k_j (callers pre-scale q, e.g. by 1/sqrt(d)).
//
// Storage precision `storage` (kFp64 = none) rounds what a GPU kernel would store in that
// format: always the inputs q, K, V; in standard_attention also the materialised score
// vector S and the probabilities P (both written to HBM by the textbook kernel); in
// online_attention the probabilities of each block (P is cast to the storage type before the
// P·V product, as FlashAttention does), while m, ℓ and the accumulator stay in double, like
// the fp32 registers of the real kernel. The output is returned unrounded.
// Throws std::invalid_argument when shapes disagree or K is empty.
Vector standard_attention(const Vector& q, const Matrix& k, const Matrix& v,
                          Precision storage = Precision::kFp64);

// Online softmax over key/value blocks of `block` rows (the last block may be ragged):
// running max m, running sum ℓ = Σ exp(s − m) and running accumulator acc = Σ exp(s − m) v;
// when a block raises the max, ℓ and acc are rescaled by exp(m − m_new). Returns acc / ℓ.
// block < 1 throws std::invalid_argument; block > n is one block.
Vector online_attention(const Vector& q, const Matrix& k, const Matrix& v, std::int64_t block,
                        Precision storage = Precision::kFp64);

// The same for every row of Q (m x d): returns O (m x d_v).
Matrix standard_attention(const Matrix& q, const Matrix& k, const Matrix& v,
                          Precision storage = Precision::kFp64);
Matrix online_attention(const Matrix& q, const Matrix& k, const Matrix& v, std::int64_t block,
                        Precision storage = Precision::kFp64);

// Direct softmax: exp(s − max s) / Σ exp(s − max s). Throws std::invalid_argument when empty.
Vector softmax(const Vector& scores);

// One block of an online-softmax walk.
struct SoftmaxTraceBlock {
  std::size_t index = 0;       // 1-based
  Vector scores;               // the scores of this block
  double m_old = 0.0;          // running max before the block (-inf before the first)
  double m = 0.0;              // running max after the block
  double l = 0.0;              // running sum Σ exp(score − m) over every score seen so far
  double rescale = 1.0;        // exp(m_old − m): factor applied to the old ℓ (1 when m did not grow)
  bool max_grew = false;       // m > m_old (always true for the first block)
};

struct SoftmaxTrace {
  std::int64_t block = 0;
  std::vector<SoftmaxTraceBlock> blocks;
  Vector softmax;              // exp(s − m_final) / ℓ_final from the online walk
  Vector direct_softmax;       // softmax(scores) computed directly
  double max_abs_difference = 0.0;
};

// Walks the online softmax of `scores` block by block. block < 1 or empty scores throw
// std::invalid_argument.
SoftmaxTrace online_softmax_trace(const Vector& scores, std::int64_t block);

// Byte counts of the lesson (FlashAttention §3.1): the full n x n score matrix of one head,
// one t x t tile, and the number of key/value blocks per query row, ceil(n / block).
constexpr core::Bytes score_bytes(std::uint64_t n, core::Bytes bytes_per_value = 2) {
  return n * n * bytes_per_value;
}
constexpr core::Bytes tile_bytes(std::uint64_t t, core::Bytes bytes_per_value = 2) {
  return t * t * bytes_per_value;
}
// block == 0 is not a block size; returns 0 then (callers validate first).
constexpr std::uint64_t num_blocks(std::uint64_t n, std::uint64_t block) {
  return block == 0 ? 0 : core::ceil_div(n, block);
}

}  // namespace attnsim::kernels
