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
  kMask,     // eager causal mask: one bool [seq_q, seq_kv] matrix every (batch, head) reads
  kCount     // number of tensors; not a tensor
};
constexpr std::size_t kNumTensors = static_cast<std::size_t>(Tensor::kCount);

// Tensors whose lines are stored again and again within one launch, so that a CTA's stored bytes
// are not the DRAM bytes its stores cause: a CTA slot's stack frame (kLocal), and the fp32 dQ
// accumulator that every key/value block's CTA of a head adds into (kDQAccum, FA-2's atomicAdd
// and FA-3's bulk reduce-add).
constexpr bool stored_repeatedly(Tensor t) { return t == Tensor::kLocal || t == Tensor::kDQAccum; }

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
  kExp,          // `count` MUFU thread instructions (ex2) on the SFU, sm.exp_per_cycle per cycle; each
                 // also takes an issue slot (the op ends when both are served)
  kElementwise,  // `count` FP32-pipe thread instructions (FMNMX, FFMA, FADD, FMUL, conversions, ...) at
                 // sm.fp32_flops_per_cycle / 2 per cycle (an FMA is one instruction, two FLOP); each
                 // also takes an issue slot
  kBarrier,      // CTA-wide barrier (__syncthreads)
  kCommit,       // close the group of async loads issued since the last commit
  kWait,         // wait until at most `count` committed async groups are in flight
  kIssue,        // `count` thread instructions through the SM's warp schedulers (schedulers_per_sm
                 // warp instructions of warp_size threads per cycle): kernels bound by instruction issue;
                 // `m` > 0: the op takes at least that many cycles (one warp's dependent instruction
                 // chain through it, which other warps' instructions cannot shorten)
  // Warp-specialized CTAs (sm_90; docs/architecture.md). mbarriers live in the CTA's shared memory,
  // are numbered 0..n-1 and initialised with their arrival counts (KernelLaunch::mbarriers()).
  kMbarArrive,   // mbarrier.arrive on `barrier`: `count` arrivals (0 counts as 1); with `tx_bytes` > 0
                 // mbarrier.arrive.expect_tx: the current phase also expects that many transaction bytes
  kMbarWait,     // mbarrier.try_wait.parity loop on `barrier`: blocks the warp group until phase `count`
                 // (0, 1, 2, ... ; PTX passes its parity, count & 1) of the barrier has completed
  kMmaCommit,    // wgmma.commit_group: closes the group of async MMAs issued since the last commit
  kMmaWait,      // wgmma.wait_group N: blocks until at most `count` committed MMA groups are pending
  kNamedSync,    // bar.sync `barrier`, `count`: waits until `count` threads (whole warp groups) arrived
  kNamedArrive,  // bar.arrive `barrier`, `count`: arrives without waiting (producer side of a sync)
};

// Which tensor-core instruction a kMma compiles to; the engine times each flavour on the SM's
// tensor pipe (kDefault: the device's one tensor rate, blocking).
enum class MmaFlavour : std::uint8_t { kDefault, kMmaSync, kWgmma, kTcgen05 };

std::string_view to_string(OpKind k);      // "load", "store", "shared_read", ..., "named_arrive"
std::string_view to_string(MmaFlavour f);  // "default", "mma_sync", "wgmma", "tcgen05"

constexpr std::uint8_t kNoBarrier = 0xff;  // TileOp::barrier of an op tied to no mbarrier

enum class SmemPattern : std::uint8_t { kRowMajor, kPadded, kSwizzled };

// One operation. Global accesses (kLoad, kStore) describe a 2-D tile: `rows` rows of
// `row_bytes` contiguous bytes, the first at byte address `addr`, consecutive rows
// `row_stride` bytes apart. Shared accesses use rows/row_bytes/pattern. kMma uses m, n, k.
struct TileOp {
  OpKind kind = OpKind::kBarrier;
  Tensor tensor = Tensor::kCount;
  SmemPattern pattern = SmemPattern::kRowMajor;
  bool async = false;
  // kSharedRead, async: register fragments loaded ahead of the MMA that consumes them (ldmatrix of
  // k-slice i+1 issued before the mma.sync of slice i): the warp group goes on, and its next kMma
  // completes no earlier than the read.
  // kLoad, async: a TMA bulk copy (Hopper cp.async.bulk). Its bytes in flight are bounded by the
  // kernel's pipeline (stages of commit/wait groups, or mbarriers), not by the per-warp / per-SM
  // in-flight allowances of ordinary loads, which the engine then does not charge.
  bool bulk = false;
  // kMma: the instruction it compiles to; with `async` (wgmma) the MMA occupies the tensor pipe
  // but does not block its warp group (kMmaCommit / kMmaWait order it).
  MmaFlavour flavour = MmaFlavour::kDefault;
  // kMbarArrive, kMbarWait: the mbarrier; bulk kLoad: the mbarrier that receives complete_tx of
  // its bytes when they have arrived (cp.async.bulk...mbarrier::complete_tx::bytes; kNoBarrier:
  // none, commit/wait groups order it); kNamedSync / kNamedArrive: the named barrier (0..15).
  std::uint8_t barrier = kNoBarrier;
  // bulk kLoad in a thread-block cluster (LaunchShape::cluster_size > 1): bit r set = the bytes are
  // delivered to (and complete_tx on `barrier` of) the cluster's CTA of rank r too, read once from
  // L2 / HBM (.multicast::cluster). 0: this CTA only. Eight bits: the portable cluster size limit.
  std::uint8_t multicast = 0;
  std::uint32_t rows = 0;
  std::uint32_t row_bytes = 0;
  Bytes addr = 0;
  Bytes row_stride = 0;
  std::uint32_t m = 0, n = 0, k = 0;
  std::uint32_t tx_bytes = 0;  // kMbarArrive: transaction bytes the phase expects (expect_tx)
  std::uint64_t count = 0;

  Bytes bytes() const { return static_cast<Bytes>(rows) * row_bytes; }
};
static_assert(sizeof(TileOp) == 56, "TileOp grew: the engine copies op streams per step");

}  // namespace attnsim::core
