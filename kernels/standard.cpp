// Textbook attention: GEMM S = QKᵀ -> HBM, row softmax S -> P, GEMM O = PV; backward as
// eager PyTorch's autograd launches (dP = dO Vᵀ, dV = Pᵀ dO, dP∘P, softmax backward, dQ = dS K,
// dK = dSᵀ Q, dK's layout copy; with a packed qkv, the scale and stack kernels of dq, dk, dv).
#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <memory>

#include "kernels/factories.h"
#include "kernels/gemm_launch.h"
#include "kernels/kernel_defaults.h"
#include "kernels/tensor_layout.h"

namespace attnsim::kernels {

namespace {

using core::OpKind;
using core::Tensor;

constexpr core::Bytes kCublasEpilogueSmem = 16580;   // measured 213188 B minus 4 stages x 384 x 64 x 2 B

// The row kernel PyTorch 2.x (aten/src/ATen/native/cuda/SoftMax.cu) launches for a row of
// `cols` values, with the launch shape kernels.csv measured on sm_90 (registers as ptxas
// allocated them for each instantiation): rows up to 4096 B -> softmax_warp_forward, one warp
// per row, 4 rows per 128-thread CTA; rows up to 8192 values -> cunn_SoftMaxForwardReg, one row
// per 1024-thread CTA holding the row in registers; longer rows -> cunn_SoftMaxForwardSmem,
// the row staged in shared memory (cols x bytes + 128 B of reduction scratch).
// The forward kernels are bound by instruction issue, not by HBM: full-precision expf and IEEE
// division (PyTorch builds without fast math) make a value cost 36 executed SASS instructions in
// the warp kernel and 62 in the register block kernel, which computes exp(x - max) twice and
// moves one value per load / store; the shared-memory kernel also computes it twice but moves
// 16-byte vectors of 8 values in all three passes (LoadT / StoreT in cunn_SoftMaxForwardSmem):
// 37. A row also costs each of its threads 32 (warp, Reg) or 64 (Smem) instructions that do not
// grow with it (index set-up, the reductions). Counted in kernels of the same structure compiled
// for sm_90 (experiments/h200_validation/softmax_sass/dynamic.py: what a warp executes, without
// the division's slow path and the block reductions' warp-0 stage; the smem analog compiles to
// the 32 registers kernels.csv measured).
// How a warp's instructions follow each other, from the control codes of the same compiled code
// (experiments/h200_validation/softmax_sass/chain.py): the loads of a row go out in `load_round_trips`
// dependent DRAM round trips (the code converts the first values, waiting on their scoreboards,
// before it issues the rest), and one warp alone needs `chain` cycles for the rest of its row (the
// stall counts ptxas set between dependent instructions, and the scoreboard waits of MUFU, SHFL,
// FCHK and shared-memory results at an assumed 20 cycles; the IEEE division's branch keeps each
// value's division in its own dependent chain). Tabled by values per thread of the instantiation.
struct RowKernelShape {
  std::uint64_t rows_per_cta = 4;
  std::uint32_t threads = 128, regs = 48;
  core::Bytes smem = 0;
  std::uint64_t instructions_per_value = 36;  // forward softmax, per value of the row
  std::uint64_t instructions_per_row_thread = 32;  // per row, for each of the row's threads
  // Of those, the SFU's (MUFU): MUFU.EX2 of each expf and MUFU.RCP of each IEEE division; the
  // block kernels compute exp twice (CUDA C++ Programming Guide, cc 9.0: 16 per SM per cycle).
  std::uint64_t mufu_per_value = 2;
  std::uint64_t load_round_trips = 1;  // dependent DRAM round trips of a warp's loads of its row
  double chain = 0;                    // cycles one warp needs for its row's instructions, alone
  // The three-pass block kernel (PyTorch before 2.4): warp 0's instructions per row besides every
  // thread's (its block reductions' second stage), and the 16-byte vectors each thread moves per
  // pass; passes 2 and 3 read the row again, one vector after the other (0: one pass).
  std::uint64_t instructions_per_row = 0;
  std::uint64_t reread_vectors = 0;
};

// chain.py's readings of the analogs (softmax_analogs.cu) at `per_thread` values per thread, and
// linear interpolation between them (extrapolation from the last two beyond the table).
struct ChainPoint {
  double per_thread, round_trips, chain;
};
ChainPoint chain_at(std::initializer_list<ChainPoint> table, double per_thread) {
  const ChainPoint* a = table.begin();
  const ChainPoint* b = a + 1;
  while (b + 1 < table.end() && b->per_thread < per_thread) ++a, ++b;
  if (per_thread <= a->per_thread) return {per_thread, a->round_trips, a->chain};
  const double f = (per_thread - a->per_thread) / (b->per_thread - a->per_thread);
  return {per_thread, a->round_trips + f * (b->round_trips - a->round_trips), a->chain + f * (b->chain - a->chain)};
}

// The Smem kernel's readings (row_softmax_smem) at `per_thread` values of each thread that holds data.
ChainPoint smem_chain(double per_thread) {
  return chain_at({{8, 1, 1706}, {16, 1, 2684}, {32, 1, 4809}, {64, 2, 9134}}, per_thread);
}

// `backward`: the launch shape of the softmax backward, which before 2.7 is cunn_SoftMaxBackward
// with SoftMax_getBlockSize threads for rows over 1024 values (its work: RowwiseLaunch::emit_step).
RowKernelShape row_kernel_shape(std::uint64_t cols, core::Bytes value_bytes, const core::Workload& w, bool backward) {
  RowKernelShape k;
  ChainPoint c;
  const core::SoftmaxEra era = core::softmax_era(w);
  const bool three_pass = backward ? core::softmax_backward_rereads(w, cols, value_bytes)
                                   : core::softmax_three_pass(w, cols, value_bytes);
  if (three_pass) {
    // cunn_SoftMaxForward: three passes over the row in global memory (max; sum of exp; exp / sum
    // and the store), each thread moving 16-byte vectors. Before 2.4 launched with
    // SoftMax_getBlockSize(ILP, cols) (ILP = 16 B / value, cols / ILP threads halved, rounded up
    // to a power of two, 32 … 512) and block reductions through shared memory (block.x floats);
    // the analog `row_softmax_block` (softmax_analogs.cu; dynamic.py, chain.py): 36.9 executed
    // instructions per value (3 MUFU), 43 per row and thread, warp 0 267 more per row; 32 / 40
    // registers at 16 / 32 values per thread (below 16 values per thread, the 16-value readings).
    // In 2.4 to 2.6, for rows that do not fit the shared-memory kernel: SoftMaxForward_getBlockSize
    // threads (1024) and warp-shuffle reductions (the Smem kernel's 64 per row and thread).
    std::uint64_t t = 1;
    if (era == core::SoftmaxEra::kBefore24 || backward) {
      const std::uint64_t ilp = std::max<std::uint64_t>(1, 16 / value_bytes);
      std::uint64_t most = std::min<std::uint64_t>(cols / ilp, 1024);
      if (ilp > 1) most /= 2;
      while (t < most) t *= 2;
      k.instructions_per_row_thread = 43;
      k.instructions_per_row = 32 * 267;
    } else {
      t = core::ceil_div(std::min<std::uint64_t>(cols, 1024), 32) * 32;
      k.instructions_per_row_thread = 64;
    }
    k.rows_per_cta = 1;
    k.threads = static_cast<std::uint32_t>(std::max<std::uint64_t>(t, 32));
    k.smem = k.threads * 4;
    const double per_thread = static_cast<double>(core::ceil_div(cols, k.threads));
    k.regs = per_thread <= 16 ? 32 : 40;
    k.instructions_per_value = 37;
    k.mufu_per_value = 3;
    k.reread_vectors = core::ceil_div(core::ceil_div(cols, k.threads) * value_bytes, 16);
    c = chain_at({{16, 5, 3225}, {32, 9, 5196}}, per_thread);
    k.load_round_trips = 1;
    k.chain = c.chain;
    return k;
  }
  const bool warp_row = era == core::SoftmaxEra::kFrom27 ? cols * value_bytes <= 4096 : cols <= 1024 && cols * value_bytes <= 4096;
  if (era == core::SoftmaxEra::k24To26 && !warp_row) {
    // 2.4 to 2.6 (pull request 122970): cunn_SoftMaxForwardSmem for rows that fit its 48 KiB,
    // SoftMaxForward_getBlockSize(cols) threads (cols rounded up to whole warps, at most 1024),
    // launched with all of sharedMemPerBlock (49,152 B) as its dynamic shared memory; every thread
    // holding data moves 16-byte vectors of 8 values (below 8192 fp16 values, cols / 8 threads
    // hold one each, the rest take part in the reductions). The Smem analog's counts and chain at
    // the values each such thread holds (row_softmax_smem<8> for one vector).
    k.rows_per_cta = 1;
    k.threads = static_cast<std::uint32_t>(core::ceil_div(std::min<std::uint64_t>(cols, 1024), 32) * 32);
    k.smem = 49152;
    k.regs = 32;
    k.instructions_per_value = 37;
    k.instructions_per_row_thread = 64;
    k.mufu_per_value = 3;
    const std::uint64_t per_vector = std::max<std::uint64_t>(1, 16 / value_bytes);
    c = smem_chain(static_cast<double>(core::ceil_div(core::ceil_div(cols, per_vector), k.threads) * per_vector));
    k.load_round_trips = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(c.round_trips)));
    k.chain = c.chain;
    return k;
  }
  if (warp_row) {
    k.regs = cols <= 1024 ? 48 : 80;  // kernels.csv: 48 (log2 10), 80 (log2 11)
    // softmax_warp_forward holds next_power_of_two(cols) / 32 values per lane.
    std::uint64_t lane = 1;
    while (lane * 32 < cols) lane *= 2;
    c = chain_at({{1, 1, 445}, {2, 1, 554}, {4, 1, 795}, {8, 2, 1317}, {16, 3, 2474}, {32, 5, 4752}, {64, 10, 9392}},
                 static_cast<double>(lane));
  } else {
    k.rows_per_cta = 1;
    k.threads = 1024;
    k.smem = 128;  // one float per warp for the block reductions
    const double per_thread = static_cast<double>(core::ceil_div(cols, 1024));
    if (cols <= 8192) {
      k.regs = cols <= 4096 ? 30 : 37;  // kernels.csv: 30 (N=4096), 37 (N=8192)
      k.instructions_per_value = 62;
      k.mufu_per_value = 3;
      c = chain_at({{1, 1, 937}, {2, 1, 1145}, {3, 1, 1352}, {4, 1, 1565}, {5, 1, 1789}, {6, 1, 2045}, {7, 1, 2299},
                    {8, 1, 2542}},
                   per_thread);
    } else {
      k.regs = 32;  // kernels.csv: 32 (N=16384, 32896 B dynamic shared memory)
      k.smem = cols * value_bytes + 128;
      k.instructions_per_value = 37;
      k.instructions_per_row_thread = 64;
      k.mufu_per_value = 3;
      c = smem_chain(std::max(16.0, per_thread));  // rows of more than 8192 values: 16 or more per thread
    }
  }
  k.load_round_trips = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(c.round_trips)));
  k.chain = c.chain;
  return k;
}

// The forward row kernel's instructions in slices, each with its share of the issue and MUFU work
// and of the chain: the warp schedulers interleave the resident warps instruction by instruction,
// so CTAs computing at the same time progress together, where one issue op per CTA would be served
// whole, in order (the SM's issue slots are a FIFO server in the engine). One slice per
// kSliceCycles of the chain, at most kMaxIssueSlices (finer slices move the kernels.csv softmax
// rows by under one point: 64 slices everywhere gave -5.1 % at N = 1024 against -5.7 %).
constexpr double kSliceCycles = 128;
constexpr std::uint64_t kMaxIssueSlices = 64;

// Row-wise kernel over score-shaped [seq_q, seq_kv] tensors: softmax forward (S -> P) and
// backward (P, dP -> dS). Each row touches the columns the score GEMM wrote for it.
class RowwiseLaunch : public core::KernelLaunch {
 public:
  // `gpu`: the row kernels are CUDA kernels issued by warp schedulers (RowKernelShape); on a
  // scratchpad device the row work is counted in FP32 operations on its vector unit.
  RowwiseLaunch(std::string name, std::vector<Tensor> reads, Tensor write, const core::Workload& w, bool gpu)
      : name_(std::move(name)), reads_(std::move(reads)), write_(write), w_(w),
        three_pass_(core::softmax_three_pass(w, w.seq_kv, w.value_bytes())),
        backward_rereads_(core::softmax_backward_rereads(w, w.seq_kv, w.value_bytes())),
        k_(row_kernel_shape(w.seq_kv, w.value_bytes(), w, reads_.size() == 2)), gpu_(gpu) {}
  std::string name() const override { return name_; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = core::ceil_div(w_.seq_q, k_.rows_per_cta);
    s.grid_y = w_.heads;
    s.grid_z = w_.batch;
    s.threads_per_cta = k_.threads;
    s.regs_per_thread = k_.regs;
    s.smem_dynamic_bytes = k_.smem;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t per = core::ceil_div(w_.seq_q, k_.rows_per_cta);
    const std::uint64_t bh = cta / per, row0 = (cta % per) * k_.rows_per_cta;
    const std::uint64_t rows = std::min(k_.rows_per_cta, w_.seq_q - row0);
    if (gpu_ && reads_.size() == 1) {  // forward on a GPU: issue-bound (RowKernelShape)
      emit_forward(bh, row0, rows, out);
      return true;
    }
    for (std::uint64_t q = row0; q < row0 + rows; ++q) {
      const std::uint64_t cols = columns(q);
      auto load = [&](Tensor t) {
        out.push_back(TensorLayout::tile(OpKind::kLoad, t, bh, w_.seq_q, w_.seq_kv, w_.value_bytes(), q, 1, 0, cols));
      };
      // The three-pass kernels read their first input again: the forward's S twice more, the
      // backward's gradient (dP∘P) once more, after its sum (cunn_SoftMaxBackward).
      if (backward_rereads_ && reads_.size() == 2) load(reads_[1]);
      for (Tensor t : reads_) load(t);
      if (three_pass_ && reads_.size() == 1) load(reads_[0]), load(reads_[0]);
      out.push_back(TensorLayout::count_op(OpKind::kElementwise, 3 * cols * reads_.size()));
      if (reads_.size() == 1) out.push_back(TensorLayout::count_op(OpKind::kExp, cols));
      out.push_back(TensorLayout::tile(OpKind::kStore, write_, bh, w_.seq_q, w_.seq_kv, w_.value_bytes(), q, 1, 0, cols));
    }
    return true;
  }

 private:
  // The forward kernel's rows [row0, row0 + rows) of matrix `bh`: the CTA's warps load their rows
  // together (one tile of all the CTA's rows where they have the same columns) in load_round_trips
  // dependent round trips of whole 128-byte lines, then compute in slices (kSliceCycles) (kExp: the
  // MUFU instructions, kIssue: the rest, at least its share of the chain), then store.
  void emit_forward(std::uint64_t bh, std::uint64_t row0, std::uint64_t rows, std::vector<core::TileOp>& out) const {
    bool same = true;  // a causal mask's block edge may fall between a CTA's rows
    for (std::uint64_t q = row0 + 1; q < row0 + rows; ++q) same = same && columns(q) == columns(row0);
    const std::uint64_t group = same ? rows : 1, per_line = std::max<std::uint64_t>(1, 128 / w_.value_bytes());
    const std::uint64_t trips = k_.load_round_trips;
    for (std::uint64_t j = 0; j < trips; ++j)
      for (std::uint64_t q = row0; q < row0 + rows; q += group) {
        const std::uint64_t cols = columns(q), lines = core::ceil_div(cols, per_line);
        const std::uint64_t c0 = std::min(cols, lines * j / trips * per_line);
        const std::uint64_t c1 = std::min(cols, lines * (j + 1) / trips * per_line);
        if (c1 > c0)
          out.push_back(
              TensorLayout::tile(OpKind::kLoad, reads_[0], bh, w_.seq_q, w_.seq_kv, w_.value_bytes(), q, group, c0, c1 - c0));
      }
    const std::uint64_t threads_per_row = k_.threads / k_.rows_per_cta;
    std::uint64_t issue = 0, mufu = 0;
    for (std::uint64_t q = row0; q < row0 + rows; ++q) {
      const std::uint64_t cols = columns(q);
      issue += (k_.instructions_per_value - k_.mufu_per_value) * cols + k_.instructions_per_row_thread * threads_per_row +
               k_.instructions_per_row;
      mufu += k_.mufu_per_value * cols;
    }
    // The three-pass kernel's passes 2 and 3 read the row again, one vector of every thread (a
    // contiguous part of the row) after the other, each after a third of the row's work.
    const std::uint64_t passes = k_.reread_vectors ? 3 : 1;
    auto reread = [&] {
      for (std::uint64_t v = 0; v < k_.reread_vectors; ++v)
        for (std::uint64_t q = row0; q < row0 + rows; q += group) {
          const std::uint64_t cols = columns(q), lines = core::ceil_div(cols, per_line);
          const std::uint64_t c0 = std::min(cols, lines * v / k_.reread_vectors * per_line);
          const std::uint64_t c1 = std::min(cols, lines * (v + 1) / k_.reread_vectors * per_line);
          if (c1 > c0)
            out.push_back(TensorLayout::tile(OpKind::kLoad, reads_[0], bh, w_.seq_q, w_.seq_kv, w_.value_bytes(), q,
                                             group, c0, c1 - c0));
        }
    };
    const std::uint64_t n =
        std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(k_.chain / kSliceCycles)), passes, kMaxIssueSlices);
    for (std::uint64_t j = 0; j < n; ++j) {
      if (passes > 1 && j > 0 && (j == n / 3 || j == 2 * n / 3)) reread();
      out.push_back(TensorLayout::count_op(OpKind::kExp, mufu * (j + 1) / n - mufu * j / n));
      core::TileOp op = TensorLayout::count_op(OpKind::kIssue, issue * (j + 1) / n - issue * j / n);
      op.m = static_cast<std::uint32_t>(std::llround(k_.chain / static_cast<double>(n)));
      out.push_back(op);
    }
    for (std::uint64_t q = row0; q < row0 + rows; q += group)
      out.push_back(TensorLayout::tile(OpKind::kStore, write_, bh, w_.seq_q, w_.seq_kv, w_.value_bytes(), q, group, 0, columns(q)));
  }
  std::uint64_t columns(std::uint64_t q) const {
    if (!w_.causal) return w_.seq_kv;
    const std::uint64_t i = q / w_.block_m, row0 = i * w_.block_m;
    const std::uint64_t r = std::min(w_.block_m, w_.seq_q - row0);
    return std::min(w_.seq_kv,
                    w_.block_n * KernelDefaults::causal_col_blocks(row0, r, w_.seq_kv - w_.seq_q, w_.seq_kv, w_.block_n));
  }
  std::string name_;
  std::vector<Tensor> reads_;
  Tensor write_;
  core::Workload w_;
  bool three_pass_;        // the forward reads its row three times (core::softmax_three_pass)
  bool backward_rereads_;  // the backward reads its gradient twice (core::softmax_backward_rereads)
  RowKernelShape k_;
  bool gpu_;
};

// The launch shape of PyTorch's elementwise and copy kernels as modelled here: `per_head` CTAs of
// 128 threads and 32 registers per (batch, head).
core::LaunchShape elementwise_shape(std::uint64_t per_head, const core::Workload& w) {
  core::LaunchShape s;
  s.grid_x = per_head;
  s.grid_y = w.heads;
  s.grid_z = w.batch;
  s.threads_per_cta = 128;
  s.regs_per_thread = 32;
  return s;
}

// Elementwise kernel over whole [rows, cols] matrices, one per query head (b, h): PyTorch's
// vectorized_elementwise_kernel / copy kernels, which read every value of their inputs and write
// every value of their output. Uses:
// - eager causal mask (`masked_fill(mask, -inf)` / `torch.where` on S, forward; the backward's
//   `grad.masked_fill(mask, 0)` on dS), in place: reads and writes every S / dS entry;
// - the product `grad * output` that softmax_backward_cuda_out (aten/src/ATen/native/cuda/
//   SoftMax.cu) computes before the softmax backward kernel: reads dP and P, writes the product
//   (over dP's range here: PyTorch allocates a new tensor of the same size);
// - AccumulateGrad's copy of dK: the `mat2` gradient of QKᵀ is d(Kᵀ) = Qᵀ·dS, whose transpose
//   does not obey K's strides, so autograd clones it into K's layout (N_kv·d read and written;
//   in place over dK's range here).
// Modelled as `rows_per_cta` rows per 128-thread CTA (PyTorch's kernels use one 128-thread CTA per
// few hundred values: the bytes are the same, the CTA count smaller to bound simulation cost);
// one FP32 operation per value. A mask kernel (`mask`) also reads the rows' bytes of the bool
// [rows, cols] mask, one matrix broadcast over every (batch, head): masked_fill / torch.where
// read it once per output value, so each head reads it again (from the L2 while it stays there).
class ElementwiseLaunch : public core::KernelLaunch {
 public:
  ElementwiseLaunch(std::string name, std::vector<Tensor> reads, Tensor write, const core::Workload& w,
                    std::uint64_t rows, std::uint64_t cols, std::uint64_t rows_per_cta, core::Bytes mask_bytes = 0)
      : name_(std::move(name)), reads_(std::move(reads)), write_(write), w_(w), rows_(rows), cols_(cols),
        per_(std::max<std::uint64_t>(1, rows_per_cta)), mask_bytes_(mask_bytes) {}
  std::string name() const override { return name_; }
  // With a mask, one matrix broadcast over every head (an operand of stride 0), PyTorch runs its
  // non-contiguous elementwise loop (aten/src/ATen/native/cuda/CUDALoops.cuh, legacy kernel of
  // 128 threads x 4 values), which loads each value's operands after storing the value before
  // (experiments/h200_validation/softmax_sass/broadcast_add.cu): one value per thread in flight.
  core::LaunchShape shape() const override {
    core::LaunchShape s = elementwise_shape(core::ceil_div(rows_, per_), w_);
    if (mask_bytes_) s.inflight_bytes_per_warp = 32 * (reads_.size() * w_.value_bytes() + mask_bytes_);
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t ctas = core::ceil_div(rows_, per_);
    const std::uint64_t bh = cta / ctas, row0 = (cta % ctas) * per_;
    const std::uint64_t rows = std::min(per_, rows_ - row0);
    for (Tensor t : reads_)
      out.push_back(TensorLayout::tile(OpKind::kLoad, t, bh, rows_, cols_, w_.value_bytes(), row0, rows, 0, cols_));
    if (mask_bytes_)
      out.push_back(TensorLayout::tile(OpKind::kLoad, Tensor::kMask, 0, rows_, cols_, mask_bytes_, row0, rows, 0, cols_));
    out.push_back(TensorLayout::count_op(OpKind::kElementwise, rows * cols_));
    out.push_back(TensorLayout::tile(OpKind::kStore, write_, bh, rows_, cols_, w_.value_bytes(), row0, rows, 0, cols_));
    return true;
  }

 private:
  std::string name_;
  std::vector<Tensor> reads_;
  Tensor write_;
  core::Workload w_;
  std::uint64_t rows_, cols_, per_;
  core::Bytes mask_bytes_;  // bytes per value of the [rows, cols] mask it also reads (0: none)
};

// FlashAttention's benchmark builds its causal mask on every call, one [N_q, N_kv] matrix for all
// heads (attention_pytorch: `torch.triu(torch.full((N, N), -10000.0), 1)` in fp32, then `.to` the
// scores' dtype): kFull writes the fp32 matrix, kTriu reads it and writes its upper triangle to a
// new fp32 matrix, kCast reads that and writes the matrix in the scores' dtype, which the mask
// add then reads (tensor `mask`: the cast at the start of its range, the fp32 matrices after it).
// `rows_per_cta` rows per 128-thread CTA, one FP32 operation per value.
class MaskBuildLaunch : public core::KernelLaunch {
 public:
  enum class Step { kFull, kTriu, kCast };
  MaskBuildLaunch(std::string name, Step step, const core::Workload& w)
      : name_(std::move(name)), step_(step), w_(w),
        per_(std::max<std::uint64_t>(1, core::ceil_div(1024, w.seq_kv))) {}
  std::string name() const override { return name_; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = core::ceil_div(w_.seq_q, per_);
    s.threads_per_cta = 128;
    s.regs_per_thread = 32;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t row0 = cta * per_, rows = std::min(per_, w_.seq_q - row0), n = w_.seq_q, m = w_.seq_kv;
    // fp32 matrices as matrices 1 (full) and 2 (triu) of 4-byte values: past the cast's bytes.
    auto fp32 = [&](OpKind k, std::uint64_t which) {
      return TensorLayout::tile(k, Tensor::kMask, which, n, m, 4, row0, rows, 0, m);
    };
    if (step_ == Step::kTriu) out.push_back(fp32(OpKind::kLoad, 1));
    if (step_ == Step::kCast) out.push_back(fp32(OpKind::kLoad, 2));
    out.push_back(TensorLayout::count_op(OpKind::kElementwise, rows * m));
    if (step_ == Step::kCast)
      out.push_back(TensorLayout::tile(OpKind::kStore, Tensor::kMask, 0, n, m, w_.value_bytes(), row0, rows, 0, m));
    else
      out.push_back(fp32(OpKind::kStore, step_ == Step::kFull ? 1 : 2));
    return true;
  }

 private:
  std::string name_;
  Step step_;
  core::Workload w_;
  std::uint64_t per_;
};

// qkv_packed's copy of k to `(b h) d s`: PyTorch's copy kernel for a non-contiguous source
// (TensorIterator orders the loop by the contiguous output, so its innermost index is s) writes
// each d-row of the transposed head contiguously and reads k down a column: consecutive threads
// read values of consecutive keys, one value of each key's row, every value in its own 32-B sector
// (aten/src/ATen/native/cuda/Copy.cu direct_copy_kernel_cuda through gpu_kernel; legacy launch of
// 128 threads x 4 values, 512 output values per CTA). The bytes are the row copy's; the L2 sees
// one sector request per value.
class TransposeCopyLaunch : public core::KernelLaunch {
 public:
  TransposeCopyLaunch(std::string name, Tensor t, const core::Workload& w, std::uint64_t keys)
      : name_(std::move(name)), t_(t), w_(w), keys_(keys), per_row_(core::ceil_div(keys, kValues)) {}
  std::string name() const override { return name_; }
  core::LaunchShape shape() const override { return elementwise_shape(w_.head_dim * per_row_, w_); }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t per_head = w_.head_dim * per_row_;
    const std::uint64_t bh = cta / per_head, c = (cta % per_head) / per_row_, k0 = (cta % per_row_) * kValues;
    const std::uint64_t n = std::min(kValues, keys_ - k0), v = w_.value_bytes();
    // Column c of the [keys, d] source, rows k0..k0+n; row c of the [d, keys] destination.
    out.push_back(TensorLayout::tile(OpKind::kLoad, t_, bh, keys_, w_.head_dim, v, k0, n, c, 1));
    out.push_back(TensorLayout::count_op(OpKind::kElementwise, n));
    out.push_back(TensorLayout::tile(OpKind::kStore, t_, bh, w_.head_dim, keys_, v, c, 1, k0, n));
    return true;
  }

 private:
  static constexpr std::uint64_t kValues = 512;
  std::string name_;
  Tensor t_;
  core::Workload w_;
  std::uint64_t keys_, per_row_;
};

// One score-shaped [seq_q, seq_kv] elementwise launch per query head, one row per CTA.
std::unique_ptr<core::KernelLaunch> score_elementwise(std::string name, std::vector<Tensor> reads, Tensor write,
                                                      const core::Workload& w, core::Bytes mask_bytes = 0) {
  return std::make_unique<ElementwiseLaunch>(std::move(name), std::move(reads), write, w, w.seq_q, w.seq_kv, 1,
                                             mask_bytes);
}

core::Workload resolve(const core::Workload& in, const core::DeviceSpec& device) {
  core::Workload w = KernelDefaults::validate_shape(in);
  if (w.block_m == 0) w.block_m = 256;
  if (w.block_n == 0) w.block_n = 128;
  if (w.block_k == 0) w.block_k = 64;
  if (w.warps == 0) {
    w.warps = 12;
    // A block that cannot hold cuBLAS's 12 warps at its registers per thread (the teaching
    // preset's 32768): one warp group instead.
    const std::uint64_t regs = w.regs_per_thread ? w.regs_per_thread : 168;
    if (device.kind == core::DeviceKind::kGpu && device.sm.max_registers_per_block &&
        12ull * device.sm.warp_size * regs > device.sm.max_registers_per_block)
      w.warps = 4;
  }
  // The fewest stages (4 at most) whose ring and epilogue buffer fit; on a device too small for
  // one stage of cuBLAS's tile (the teaching preset) the tile is halved until one does.
  auto fitting_stages = [&](std::uint64_t bm, std::uint64_t bn) {
    std::uint32_t s = 4;
    while (s > 1 && s * (bm + bn) * w.block_k * w.value_bytes() + kCublasEpilogueSmem > KernelDefaults::smem_limit(device))
      --s;
    return s;
  };
  if (w.stages == 0 && w.smem_per_cta == 0)
    KernelDefaults::shrink_to_fit(
        w.block_m, w.block_n, in.block_m == 0, in.block_n == 0,
        [&](std::uint64_t bm, std::uint64_t bn) {
          return fitting_stages(bm, bn) * (bm + bn) * w.block_k * w.value_bytes() + kCublasEpilogueSmem;
        },
        device);
  const core::Bytes per_stage = (w.block_m + w.block_n) * w.block_k * w.value_bytes();
  if (w.stages == 0) w.stages = w.smem_per_cta == 0 ? fitting_stages(w.block_m, w.block_n) : 4;
  // cuBLAS on sm_90 launches its nvjet GEMMs as 1x2 clusters that multicast one operand
  // (kernels.csv: "_1x2_" in every GEMM's name); clusters need sm_90.
  if (w.gemm_cluster == 0)
    w.gemm_cluster = device.kind == core::DeviceKind::kGpu && device.compute_capability >= 90 ? 2 : 1;
  if (w.regs_per_thread == 0) w.regs_per_thread = 168;
  if (w.smem_per_cta == 0) w.smem_per_cta = w.stages * per_stage + kCublasEpilogueSmem;
  // Blame the key that set the size: smem_per_cta when given, else the larger GEMM tile side.
  KernelDefaults::check_smem(w.smem_per_cta, device,
                             in.smem_per_cta ? "smem_per_cta" : w.block_n > w.block_m ? "block_n" : "block_m",
                             "GEMM tiles " + std::to_string(w.block_m) + "x" + std::to_string(w.block_n) + "x" +
                                 std::to_string(w.block_k) + " with " + std::to_string(w.stages) + " stages");
  return w;
}

GemmSpec base_spec(const core::Workload& w) {
  GemmSpec g;
  g.block_m = w.block_m;
  g.block_n = w.block_n;
  g.block_k = w.block_k;
  g.stages = w.stages;
  g.cluster = w.gemm_cluster;
  g.causal_off = w.seq_kv - w.seq_q;
  g.shape.threads_per_cta = w.warps * 32;
  g.shape.regs_per_thread = w.regs_per_thread;
  g.shape.smem_dynamic_bytes = w.smem_per_cta;
  return g;
}

// C[Nq×Nkv] = A[Nq×d]·B[Nkv×d]ᵀ: S = QKᵀ, dP = dO·Vᵀ.
std::unique_ptr<core::KernelLaunch> scores(const core::Workload& w, std::string name, Tensor a, Tensor b, Tensor c,
                                           bool bulk) {
  GemmSpec g = base_spec(w);
  g.bulk_loads = bulk;
  g.warp_specialized = bulk && w.gemm_ws;  // sm_90 nvjet kernels are warp-specialized; opt-in (gemm_ws)
  g.name = std::move(name);
  g.a = a, g.b = b, g.c = c;
  g.b_layout = GemmSpec::BLayout::kNT;
  g.shared = GemmSpec::Shared::kA;  // (i, j) and (i, j^1) share the rows of A
  g.b_per_kv_head = true;
  g.m = w.seq_q, g.n = w.seq_kv, g.k = w.head_dim;
  g.causal = w.causal ? GemmSpec::Causal::kSkipTiles : GemmSpec::Causal::kNone;
  return std::make_unique<GemmLaunch>(g, w);
}

// C[Nq×d] = A[Nq×Nkv]·B[Nkv×d]: O = PV, dQ = dS·K.
std::unique_ptr<core::KernelLaunch> rows(const core::Workload& w, std::string name, Tensor a, Tensor b, Tensor c,
                                           bool bulk) {
  GemmSpec g = base_spec(w);
  g.bulk_loads = bulk;
  g.warp_specialized = bulk && w.gemm_ws;  // sm_90 nvjet kernels are warp-specialized; opt-in (gemm_ws)
  g.name = std::move(name);
  g.a = a, g.b = b, g.c = c;
  g.b_layout = GemmSpec::BLayout::kNN;
  g.shared = GemmSpec::Shared::kB;  // (i, j) and (i^1, j) share the chunk of B
  g.b_per_kv_head = true;
  g.m = w.seq_q, g.n = w.head_dim, g.k = w.seq_kv;
  g.causal = w.causal ? GemmSpec::Causal::kKPrefix : GemmSpec::Causal::kNone;
  return std::make_unique<GemmLaunch>(g, w);
}

// C[Nkv×d] = A[Nq×Nkv]ᵀ·B[Nq×d]: dV = Pᵀ·dO, dK = dSᵀ·Q (C per query head).
std::unique_ptr<core::KernelLaunch> keys(const core::Workload& w, std::string name, Tensor a, Tensor b, Tensor c,
                                           bool bulk) {
  GemmSpec g = base_spec(w);
  g.bulk_loads = bulk;
  g.warp_specialized = bulk && w.gemm_ws;  // sm_90 nvjet kernels are warp-specialized; opt-in (gemm_ws)
  g.name = std::move(name);
  g.a = a, g.b = b, g.c = c;
  g.a_layout = GemmSpec::ALayout::kTransposed;
  g.b_layout = GemmSpec::BLayout::kNN;
  g.shared = GemmSpec::Shared::kB;
  g.m = w.seq_kv, g.n = w.head_dim, g.k = w.seq_q;
  g.causal = w.causal ? GemmSpec::Causal::kKSuffix : GemmSpec::Causal::kNone;
  return std::make_unique<GemmLaunch>(g, w);
}

}  // namespace

core::TileProgram make_standard(const core::Workload& workload, const core::DeviceSpec& device) {
  core::TileProgram p;
  p.workload = resolve(workload, device);
  // Eager PyTorch: the GEMMs and the softmax run over the whole score matrix; causal is a mask
  // kernel over it (forward) and the mask's backward (docs/kernels.md, standard).
  core::Workload w = p.workload;
  const bool causal = w.causal;
  w.causal = false;
  // cuBLAS on sm_90 loads GEMM operands with TMA bulk copies (kernels.csv: nvjet kernels).
  const bool gpu = device.kind == core::DeviceKind::kGpu;
  const bool bulk = gpu && device.compute_capability >= 90;
  // An elementwise kernel over one [rows, head_dim] tensor per head, in place: the layout copies
  // and the backward's scale and stack kernels. qkv_packed (FlashAttention's benchmark
  // attention_pytorch): einops' rearranges copy q to (b h) t d and k to (b h) d s before baddbmm,
  // and the einsum's bmm copies v to (b h) s d before P V (k's transposed destination: its own
  // launch, the same bytes).
  auto head_rows = [&](const char* name, Tensor t, std::uint64_t rows) {
    p.launches.push_back(std::make_unique<ElementwiseLaunch>(name, std::vector<Tensor>{t}, t, w, rows, w.head_dim,
                                                             core::ceil_div(1024, w.head_dim)));
  };
  if (w.qkv_packed) {
    head_rows("standard_q_copy", Tensor::kQ, w.seq_q);
    p.launches.push_back(std::make_unique<TransposeCopyLaunch>("standard_k_copy", Tensor::kK, w, w.seq_kv));
  }
  p.launches.push_back(scores(w, "standard_qk", Tensor::kQ, Tensor::kK, Tensor::kS, bulk));
  // scale_kernel: `(q @ kᵀ) * scale` scales S by its own elementwise kernel before the mask.
  if (w.scale_kernel) p.launches.push_back(score_elementwise("standard_scale", {Tensor::kS}, Tensor::kS, w));
  if (causal && w.qkv_packed) {
    // The benchmark's mask, built on every call, then added to S (a new tensor of S's size): it
    // reads S and the mask in S's dtype.
    p.launches.push_back(std::make_unique<MaskBuildLaunch>("standard_mask_full", MaskBuildLaunch::Step::kFull, w));
    p.launches.push_back(std::make_unique<MaskBuildLaunch>("standard_mask_triu", MaskBuildLaunch::Step::kTriu, w));
    // `.to` of a tensor already in the scores' dtype returns it: no cast kernel for fp32 scores.
    if (w.value_bytes() != 4)
      p.launches.push_back(std::make_unique<MaskBuildLaunch>("standard_mask_cast", MaskBuildLaunch::Step::kCast, w));
    p.launches.push_back(score_elementwise("standard_mask", {Tensor::kS}, Tensor::kS, w, w.value_bytes()));
  } else if (causal) {
    p.launches.push_back(score_elementwise("standard_mask", {Tensor::kS}, Tensor::kS, w, 1));
  }
  p.launches.push_back(
      std::make_unique<RowwiseLaunch>("standard_softmax", std::vector<Tensor>{Tensor::kS}, Tensor::kP, w, gpu));
  if (w.qkv_packed) head_rows("standard_v_copy", Tensor::kV, w.seq_kv);
  p.launches.push_back(rows(w, "standard_pv", Tensor::kP, Tensor::kV, Tensor::kO, bulk));
  if (w.pass == core::Pass::kFwdBwd) {
    // Autograd order (derivatives.yaml, bmm: `self` then `mat2`): dP = dO Vᵀ before dV = Pᵀ dO,
    // dQ = dS K before dK = dSᵀ Q.
    p.launches.push_back(scores(w, "standard_bwd_dp", Tensor::kDO, Tensor::kV, Tensor::kDP, bulk));
    p.launches.push_back(keys(w, "standard_bwd_dv", Tensor::kP, Tensor::kDO, Tensor::kDV, bulk));
    // _softmax_backward_data (SoftMax.cu, softmax_backward_cuda_out): tmp = dP * P as its own
    // elementwise kernel, then the row kernel dS = tmp - P * rowsum(tmp) reading tmp and P.
    p.launches.push_back(score_elementwise("standard_bwd_softmax_mul", {Tensor::kDP, Tensor::kP}, Tensor::kDP, w));
    p.launches.push_back(std::make_unique<RowwiseLaunch>(
        "standard_bwd_softmax", std::vector<Tensor>{Tensor::kP, Tensor::kDP}, Tensor::kDS, w, gpu));
    // The mask's backward; a packed qkv's mask is the benchmark's additive one, whose gradient
    // passes through without a kernel.
    if (causal && !w.qkv_packed)
      p.launches.push_back(score_elementwise("standard_bwd_mask", {Tensor::kDS}, Tensor::kDS, w, 1));
    // The scale's MulBackward (grad * scale) over dS, after the mask's backward (reverse order).
    if (w.scale_kernel) p.launches.push_back(score_elementwise("standard_bwd_scale", {Tensor::kDS}, Tensor::kDS, w));
    p.launches.push_back(rows(w, "standard_bwd_dq", Tensor::kDS, Tensor::kK, Tensor::kDQ, bulk));
    // qkv_packed: baddbmm's alpha multiplies each operand's gradient by its own kernel
    // (derivatives.yaml, baddbmm: maybe_multiply(grad.bmm(...), alpha)).
    if (w.qkv_packed) head_rows("standard_bwd_dq_scale", Tensor::kDQ, w.seq_q);
    p.launches.push_back(keys(w, "standard_bwd_dk", Tensor::kDS, Tensor::kQ, Tensor::kDK, bulk));
    if (w.qkv_packed) {
      head_rows("standard_bwd_dk_scale", Tensor::kDK, w.seq_kv);
      // unbind's backward stacks dq, dk, dv into the packed gradient: a 5-D cat copies each input
      // by its own copy kernel (Shape.cu, cat_out_cuda); dk arrives as [d, s] and is read down
      // its columns, as k's forward copy.
      head_rows("standard_bwd_dq_copy", Tensor::kDQ, w.seq_q);
      p.launches.push_back(std::make_unique<TransposeCopyLaunch>("standard_bwd_dk_copy", Tensor::kDK, w, w.seq_kv));
      head_rows("standard_bwd_dv_copy", Tensor::kDV, w.seq_kv);
    } else {
      // AccumulateGrad: dK arrives as the transpose of d(Kᵀ) and is cloned into K's layout.
      head_rows("standard_bwd_dk_copy", Tensor::kDK, w.seq_kv);
    }
  }
  return p;
}

}  // namespace attnsim::kernels
