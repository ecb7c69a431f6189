// The tile operations a kernel program yields per CTA, and the tensors they touch.
// Plain data: the engine times them, the traffic counter sums their bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/core/types.h"

namespace attnsim::core {

// Every tensor attnsim reports traffic for. Order here is the order of output tables.
enum class Tensor : std::uint8_t {
  kQ, kK, kV, kS, kP, kO,
  kM,        // running row max (flash1 statistics)
  kL,        // running row sum ℓ (flash1 statistics)
  kLse,      // logsumexp per row (flash2, stored for backward)
  kDO, kDQ, kDK, kDV, kDS, kDP,
  kDelta,    // rowsum(dO ∘ O), backward preprocessing
  kOPartial, // split-KV partial accumulators
  kLsePartial,  // split-KV partial logsumexp (m and ℓ folded)
  kDQAccum,  // fp32 dQ accumulator (flash2 backward)
  kBuffer,   // microbenchmark buffer (stream_read, pointer_chase)
  kLocal,    // local memory: a CTA's stack frame (register spills); the engine gives each
             // resident CTA slot its own copy (LaunchShape::stack_frame_bytes)
  kCount     // number of tensors; not a tensor
};
constexpr std::size_t kNumTensors = static_cast<std::size_t>(Tensor::kCount);

// Global byte address where tensor `t` starts: every tensor has its own 1 TiB-aligned range.
constexpr Bytes tensor_base(Tensor t) { return (static_cast<Bytes>(t) + 1) << 40; }

std::string_view to_string(Tensor t);          // "Q", "K", ..., "dO", "O_partial", "buffer"
std::optional<Tensor> parse_tensor(std::string_view s);

enum class OpKind : std::uint8_t {
  kLoad,         // global -> on-chip (shared memory / registers); async if `async`
  kStore,        // on-chip -> global
  kSharedRead,   // shared memory read of a tile with an access pattern
  kSharedWrite,  // shared memory write of a tile with an access pattern
  kMma,          // tensor-core matrix multiply m x n x k
  kExp,          // `count` exponentials on the SFU
  kElementwise,  // `count` FP32 operations on CUDA cores (scale, max, rescale, ...)
  kBarrier,      // CTA-wide barrier (__syncthreads)
  kCommit,       // close the group of async loads issued since the last commit
  kWait,         // wait until at most `count` committed async groups are in flight
  kIssue,        // `count` thread instructions through the SM's warp schedulers (schedulers_per_sm
                 // warp instructions of warp_size threads per cycle): kernels bound by instruction issue
};

enum class SmemPattern : std::uint8_t { kRowMajor, kPadded, kSwizzled };

// One operation. Global accesses (kLoad, kStore) describe a 2-D tile: `rows` rows of
// `row_bytes` contiguous bytes, the first at byte address `addr`, consecutive rows
// `row_stride` bytes apart. Shared accesses use rows/row_bytes/pattern. kMma uses m, n, k.
struct TileOp {
  OpKind kind = OpKind::kBarrier;
  Tensor tensor = Tensor::kCount;
  SmemPattern pattern = SmemPattern::kRowMajor;
  bool async = false;
  // kLoad, async: a TMA bulk copy (Hopper cp.async.bulk). Its bytes in flight are bounded by the
  // kernel's pipeline (stages of commit/wait groups), not by the per-warp / per-SM in-flight
  // allowances of ordinary loads, which the engine then does not charge.
  bool bulk = false;
  std::uint32_t rows = 0;
  std::uint32_t row_bytes = 0;
  Bytes addr = 0;
  Bytes row_stride = 0;
  std::uint32_t m = 0, n = 0, k = 0;
  std::uint64_t count = 0;

  Bytes bytes() const { return static_cast<Bytes>(rows) * row_bytes; }
};

}  // namespace attnsim::core
