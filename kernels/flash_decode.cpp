// Split-KV decoding (Flash-Decoding): one CTA per (batch, head, split) runs the online softmax
// over its slice of the keys and writes fp32 partials (O_partial, LSE_partial); a combine launch
// (one CTA per (batch, head)) rescales and sums them into O. With one split there is no combine:
// the split kernel writes O and LSE. One query token with GQA runs
// FA-2's packed schedule: a CTA per (batch, KV head, split) holds the group's query heads as rows.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "kernels/factories.h"
#include "kernels/kernel_defaults.h"
#include "kernels/paged_kv.h"
#include "kernels/tensor_layout.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

namespace {

using core::OpKind;
using core::Tensor;
using core::TileOp;
using L = TensorLayout;

constexpr std::uint64_t kMaxQueryRows = 128;

std::uint64_t blocks_per_split(const core::Workload& w) {
  return core::ceil_div(core::ceil_div(w.seq_kv, w.block_n), w.num_splits);
}

class DecodeSplit : public core::KernelLaunch {
 public:
  explicit DecodeSplit(const core::Workload& w)
      : w_(w), layout_(w), lengths_(core::sequence_kv_lengths(w)), kv_heads_(w.kv_heads ? w.kv_heads : w.heads) {
    if (w.page_size > 0) pages_.emplace(w);
  }
  std::string name() const override { return "flash_decode_split"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = w_.num_splits;
    s.grid_y = w_.heads;
    s.grid_z = w_.batch;
    s.threads_per_cta = w_.warps * 32;
    s.regs_per_thread = w_.regs_per_thread;
    s.smem_dynamic_bytes = w_.smem_per_cta;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const override {
    const std::uint64_t bh = cta / w_.num_splits, split = cta % w_.num_splits, b = bh / w_.heads;
    // FA-2 (compute_attn_1rowblock_splitkv): blocks per split from the cache capacity (seq_kv),
    // the split's last block from the sequence's own length; a split past it is empty.
    const std::uint64_t len = lengths_[b], t_c = core::ceil_div(len, w_.block_n), bps = blocks_per_split(w_);
    const std::uint64_t j0 = split * bps, blocks = std::min(t_c, j0 + bps) > j0 ? std::min(t_c, j0 + bps) - j0 : 0;
    const std::uint64_t pre = w_.stages > 1 ? w_.stages - 1 : 0, r = w_.seq_q, d = w_.head_dim;
    auto kv_block = [&](std::uint64_t j) {
      const std::uint64_t c = std::min(w_.block_n, len - j * w_.block_n);
      for (Tensor t : {Tensor::kK, Tensor::kV}) {
        if (pages_)  // the block's rows page by page through the block table; the tail is predicated off
          pages_->append_rows(out, OpKind::kLoad, t, b, layout_.kv_matrix(bh) % kv_heads_, j * w_.block_n, c, true);
        else
          out.push_back(layout_.kv_rows(OpKind::kLoad, t, bh, j * w_.block_n, c, true));
      }
    };
    if (blocks == 0) {  // FA-2's early exit: 0 to O_partial and -inf to LSE_partial, nothing read
      if (step > 0) return false;
      const std::uint64_t part = bh * w_.num_splits + split;
      out.push_back(L::tile(OpKind::kStore, Tensor::kOPartial, part, r, d, L::kFp32, 0, r, 0, d));
      out.push_back(L::tile(OpKind::kStore, Tensor::kLsePartial, part, 1, r, L::kFp32, 0, 1, 0, r));
      return true;
    }
    if (step == 0) {
      out.push_back(layout_.q_rows(OpKind::kLoad, Tensor::kQ, bh, 0, r, true));
      for (std::uint64_t k = 0; k < std::min(pre, blocks); ++k) {
        kv_block(j0 + k);
        out.push_back(L::simple(OpKind::kCommit));
      }
      return true;
    }
    if (step <= blocks) {
      const std::uint64_t k = step - 1, j = j0 + k, c = std::min(w_.block_n, len - j * w_.block_n);
      if (k + pre < blocks) kv_block(j + pre);
      out.push_back(L::simple(OpKind::kCommit));
      out.push_back(L::count_op(OpKind::kWait, pre));
      out.push_back(L::simple(OpKind::kBarrier));
      out.push_back(L::shared(OpKind::kSharedRead, Tensor::kK, c, d * w_.value_bytes()));
      out.push_back(L::mma(r, c, d));
      out.push_back(L::count_op(OpKind::kElementwise, 3 * r * c + r * d));
      out.push_back(L::count_op(OpKind::kExp, r * c + r));
      out.push_back(L::shared(OpKind::kSharedRead, Tensor::kV, c, d * w_.value_bytes()));
      out.push_back(L::mma(r, d, c));
      out.push_back(L::simple(OpKind::kBarrier));
      return true;
    }
    if (step == blocks + 1) {
      if (w_.num_splits == 1) {
        // One split: FA-2's splitkv kernel with Split = false writes O (the output dtype) and the
        // LSE (fp32) itself, and no combine kernel runs (flash_fwd_launch_template.h).
        out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kO, bh, 0, r));
        out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kLse, bh, 0, r));
        return true;
      }
      const std::uint64_t part = bh * w_.num_splits + split;
      out.push_back(L::tile(OpKind::kStore, Tensor::kOPartial, part, r, d, L::kFp32, 0, r, 0, d));
      out.push_back(L::tile(OpKind::kStore, Tensor::kLsePartial, part, 1, r, L::kFp32, 0, 1, 0, r));
      return true;
    }
    return false;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
  std::vector<std::uint64_t> lengths_;  // per sequence
  std::uint64_t kv_heads_;
  std::optional<PagedKv> pages_;        // page_size > 0: the block table
};

class DecodeCombine : public core::KernelLaunch {
 public:
  explicit DecodeCombine(const core::Workload& w) : w_(w), layout_(w) {}
  std::string name() const override { return "flash_decode_combine"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_y = w_.heads;
    s.grid_z = w_.batch;
    s.threads_per_cta = 128;
    s.regs_per_thread = 32;
    return s;
  }
  bool emit_step(std::uint64_t bh, std::uint64_t step, std::vector<TileOp>& out) const override {
    if (step > 0) return false;
    const std::uint64_t s = w_.num_splits, r = w_.seq_q, d = w_.head_dim;
    out.push_back(L::tile(OpKind::kLoad, Tensor::kLsePartial, bh, s, r, L::kFp32, 0, s, 0, r));
    out.push_back(L::tile(OpKind::kLoad, Tensor::kOPartial, bh, s * r, d, L::kFp32, 0, s * r, 0, d));
    out.push_back(L::count_op(OpKind::kExp, s * r));
    out.push_back(L::count_op(OpKind::kElementwise, 2 * s * r * d));
    out.push_back(layout_.q_rows(OpKind::kStore, Tensor::kO, bh, 0, r));
    // The combined LSE (combine_attn_seqk_parallel writes gLSE = lse_logsum for every row).
    out.push_back(layout_.stat_rows(OpKind::kStore, Tensor::kLse, bh, 0, r));
    return true;
  }

 private:
  core::Workload w_;
  TensorLayout layout_;
};

// FlashAttention-2's num_splits_heuristic (csrc/flash_attn/flash_api.cpp): the smallest split
// count whose wave efficiency (waves / ⌈waves⌉ over `sms` CTA slots) is at least 85 % of the
// best, skipping counts that leave the blocks per split unchanged; 1 once the grid nearly fills
// the slots. Single-precision arithmetic, as the library's.
std::uint64_t fa2_num_splits(std::uint64_t ctas, std::uint64_t sms, std::uint64_t n_blocks, std::uint64_t max_splits) {
  if (static_cast<float>(ctas) >= 0.8f * static_cast<float>(sms)) return 1;
  max_splits = std::min({max_splits, sms, n_blocks});
  auto eligible = [&](std::uint64_t s) { return s == 1 || core::ceil_div(n_blocks, s) != core::ceil_div(n_blocks, s - 1); };
  std::vector<float> eff(max_splits + 1, 0.f);
  float best = 0.f;
  for (std::uint64_t s = 1; s <= max_splits; ++s) {
    if (!eligible(s)) continue;
    const float waves = static_cast<float>(ctas * s) / static_cast<float>(sms);
    eff[s] = waves / std::ceil(waves);
    best = std::max(best, eff[s]);
  }
  for (std::uint64_t s = 1; s <= max_splits; ++s)
    if (eligible(s) && eff[s] >= 0.85f * best) return s;
  return 1;
}

core::Workload resolve(const core::Workload& in, const core::DeviceSpec& device) {
  core::Workload w = KernelDefaults::validate_shape(in);
  if (w.pass != core::Pass::kFwd)
    throw core::ConfigError(core::ConfigProblem{"", 0, "pass", "flash_decode models the forward pass only"});
  if (w.seq_q > kMaxQueryRows)
    throw core::ConfigError(core::ConfigProblem{
        "", 0, "seq_q", "flash_decode handles at most " + std::to_string(kMaxQueryRows) + " query rows per sequence"});
  w.block_m = w.seq_q;
  if (w.block_n == 0) w.block_n = w.head_dim <= 64 ? 256 : (w.head_dim <= 128 ? 128 : 64);
  if (w.warps == 0) w.warps = 4;
  if (w.stages == 0) w.stages = 2;
  const std::uint64_t q_rows = core::ceil_div(core::packed_query_groups(w, true).seq_q, 16) * 16;
  auto tile_bytes = [&](std::uint64_t, std::uint64_t bn) {
    return (q_rows + 2 * bn * std::max<std::uint64_t>(1, w.stages - 1)) * w.head_dim * w.value_bytes();
  };
  if (in.smem_per_cta == 0)  // a device smaller than FA-2's split kernel assumes: halve block_n
    KernelDefaults::shrink_to_fit(w.block_m, w.block_n, false, in.block_n == 0, tile_bytes, device);
  const core::Bytes tiles = tile_bytes(w.block_m, w.block_n);
  const std::string what = "flash_decode tiles of " + std::to_string(w.block_n) + " keys";
  if (w.smem_per_cta == 0) {
    KernelDefaults::check_smem(tiles, device, "block_n", what);
    w.smem_per_cta = tiles;
  }
  KernelDefaults::check_smem(w.smem_per_cta, device, "smem_per_cta", what);
  if (w.regs_per_thread == 0)
    w.regs_per_thread = KernelDefaults::attention_regs(16, w.block_n, w.head_dim, w.warps * 32, device);
  const std::uint64_t t_c = core::ceil_div(w.seq_kv, w.block_n);
  if (w.num_splits == 0) {
    // The split CTAs' rows: (batch, KV head) with the group packed (FA-2's swap), else (batch, head).
    const core::Workload packed = core::packed_query_groups(w, true);
    const std::uint64_t rows = packed.batch * packed.heads;
    if (device.kind == core::DeviceKind::kGpu) {
      // FA-2 (set_params_splitkv): heuristic over 2 x SMs slots ("128 threads per block"), the
      // query rows in 64-row blocks (the split kernel's kBlockM), at most 128 splits.
      w.num_splits = fa2_num_splits(rows * core::ceil_div(packed.seq_q, 64), 2 * device.sm.count, t_c, 128);
    } else {
      // Scratchpad device: about one wave of the resident programs.
      w.num_splits = std::max<std::uint64_t>(1, device.sm.count / rows);
    }
  }
  w.num_splits = std::min(w.num_splits, t_c);
  w.num_splits = core::ceil_div(t_c, core::ceil_div(t_c, w.num_splits));  // no empty split
  return w;
}

}  // namespace

core::TileProgram make_flash_decode(const core::Workload& workload, const core::DeviceSpec& device) {
  core::TileProgram p;
  p.workload = resolve(workload, device);
  // The launches run on the packed view when FA-2 swaps the query heads into rows; its Q, O
  // addresses are the workload's (sim/core/workload.h).
  const core::Workload run = core::packed_query_groups(p.workload, true);
  p.launches.push_back(std::make_unique<DecodeSplit>(run));
  if (run.num_splits > 1) p.launches.push_back(std::make_unique<DecodeCombine>(run));
  return p;
}

}  // namespace attnsim::kernels
