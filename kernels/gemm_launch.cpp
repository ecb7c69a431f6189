#include "kernels/gemm_launch.h"

#include <algorithm>
#include <utility>

#include "kernels/kernel_defaults.h"

namespace attnsim::kernels {

using core::OpKind;
using core::TileOp;

GemmLaunch::GemmLaunch(GemmSpec spec, const core::Workload& w)
    : spec_(std::move(spec)), layout_(w), elem_(w.value_bytes()) {
  t_m_ = core::ceil_div(spec_.m, spec_.block_m);
  t_n_ = core::ceil_div(spec_.n, spec_.block_n);
  if (spec_.causal == GemmSpec::Causal::kSkipTiles) {
    row_start_.resize(t_m_ + 1, 0);
    for (std::uint64_t i = 0; i < t_m_; ++i) {
      const std::uint64_t r = std::min(spec_.block_m, spec_.m - i * spec_.block_m);
      row_start_[i + 1] = row_start_[i] + KernelDefaults::causal_col_blocks(i * spec_.block_m, r, spec_.causal_off,
                                                                            spec_.n, spec_.block_n);
    }
    tiles_per_matrix_ = row_start_[t_m_];
  } else {
    tiles_per_matrix_ = t_m_ * t_n_;
  }
  shape_ = spec_.shape;
  shape_.grid_x = tiles_per_matrix_;
  const std::uint32_t warps = spec_.shape.warps_per_cta();
  ws_ = spec_.warp_specialized && spec_.bulk_loads && spec_.causal == GemmSpec::Causal::kNone && warps % 4 == 0 &&
        warps >= 8 && spec_.cluster <= 2;
  if (ws_) {  // whole clusters: the partners of shared_half() are consecutive CTAs
    const std::uint64_t cl = std::max<std::uint32_t>(1, spec_.cluster);
    ws_clusters_ = cl == 1                                    ? tiles_per_matrix_
                   : spec_.shared == GemmSpec::Shared::kA ? t_m_ * core::ceil_div(t_n_, cl)
                                                              : core::ceil_div(t_m_, cl) * t_n_;
    shape_.grid_x = ws_clusters_ * cl;
    shape_.cluster_size = static_cast<std::uint32_t>(cl);
  }
  shape_.grid_y = w.heads;
  shape_.grid_z = w.batch;
}

std::uint64_t GemmLaunch::tiles_in_row(std::uint64_t i) const {
  return spec_.causal == GemmSpec::Causal::kSkipTiles ? row_start_[i + 1] - row_start_[i] : t_n_;
}

GemmLaunch::Tile GemmLaunch::tile_at(std::uint64_t bh, std::uint64_t i, std::uint64_t j) const {
  Tile t{};
  t.bh = bh;
  t.i = i;
  t.j = j;
  t.r = std::min(spec_.block_m, spec_.m - t.i * spec_.block_m);
  t.c = std::min(spec_.block_n, spec_.n - t.j * spec_.block_n);
  t.k0 = 0;
  t.k1 = spec_.k;
  if (spec_.causal == GemmSpec::Causal::kKPrefix)
    t.k1 = std::min(spec_.k, spec_.block_k * KernelDefaults::causal_col_blocks(t.i * spec_.block_m, t.r,
                                                                               spec_.causal_off, spec_.k,
                                                                               spec_.block_k));
  if (spec_.causal == GemmSpec::Causal::kKSuffix)
    t.k0 = KernelDefaults::causal_first_row(t.i * spec_.block_m, spec_.causal_off, spec_.block_k);
  return t;
}

GemmLaunch::Tile GemmLaunch::tile_of(std::uint64_t cta) const {
  const std::uint64_t bh = cta / tiles_per_matrix_;
  const std::uint64_t idx = cta % tiles_per_matrix_;
  if (spec_.causal == GemmSpec::Causal::kSkipTiles) {
    const auto i =
        static_cast<std::uint64_t>(std::upper_bound(row_start_.begin(), row_start_.end(), idx) - row_start_.begin()) - 1;
    return tile_at(bh, i, idx - row_start_[i]);
  }
  return tile_at(bh, idx / t_n_, idx % t_n_);
}

int GemmLaunch::shared_half(const Tile& t, std::uint64_t k_abs) const {
  if (spec_.cluster < 2) return 0;
  if (spec_.shared == GemmSpec::Shared::kA) {  // partner (i, j^1): same k range
    const std::uint64_t pj = t.j ^ 1;
    return pj < tiles_in_row(t.i) ? 1 + static_cast<int>(t.j & 1) : 0;
  }
  const std::uint64_t pi = t.i ^ 1;  // partner (i^1, j): its k range may differ (causal)
  if (pi >= t_m_) return 0;
  const Tile p = tile_at(t.bh, pi, t.j);
  return k_abs >= p.k0 && k_abs < p.k1 ? 1 + static_cast<int>(t.i & 1) : 0;
}

void GemmLaunch::emit_chunk(const Tile& t, std::uint64_t chunk, std::vector<TileOp>& out) const {
  const std::uint64_t k0 = t.k0 + chunk * spec_.block_k;
  const std::uint64_t kc = std::min(spec_.block_k, t.k1 - k0);
  const std::uint64_t m0 = t.i * spec_.block_m, n0 = t.j * spec_.block_n;
  const std::uint64_t b_matrix = spec_.b_per_kv_head ? layout_.kv_matrix(t.bh) : t.bh;
  const core::Bytes e = elem_;
  TileOp a = spec_.a_layout == GemmSpec::ALayout::kRowMajor
                 ? TensorLayout::tile(OpKind::kLoad, spec_.a, t.bh, spec_.m, spec_.k, e, m0, t.r, k0, kc, true)
                 : TensorLayout::tile(OpKind::kLoad, spec_.a, t.bh, spec_.k, spec_.m, e, k0, kc, m0, t.r, true);
  TileOp b = spec_.b_layout == GemmSpec::BLayout::kNT
                 ? TensorLayout::tile(OpKind::kLoad, spec_.b, b_matrix, spec_.n, spec_.k, e, n0, t.c, k0, kc, true)
                 : TensorLayout::tile(OpKind::kLoad, spec_.b, b_matrix, spec_.k, spec_.n, e, k0, kc, n0, t.c, true);
  a.bulk = b.bulk = spec_.bulk_loads;
  TileOp& shared = spec_.shared == GemmSpec::Shared::kA ? a : b;
  if (const int half = shared_half(t, k0); half != 0) {  // multicast: this member's half of the rows
    const std::uint32_t first = (shared.rows + 1) / 2;
    if (half == 2) {
      shared.addr += first * shared.row_stride;
      shared.rows -= first;
    } else {
      shared.rows = first;
    }
  }
  if (a.rows > 0) out.push_back(a);
  if (b.rows > 0) out.push_back(b);
}

bool GemmLaunch::emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const {
  if (ws_) return emit_group_step(cta, 0, step, out);
  const Tile t = tile_of(cta);
  const std::uint64_t chunks = core::ceil_div(t.k1 - t.k0, spec_.block_k);
  const std::uint64_t pre = spec_.stages > 1 ? spec_.stages - 1 : 0;
  if (step == 0) {  // prologue: fill the pipeline
    // One commit per stage even past the last chunk (an empty group), as CUTLASS's multistage
    // mainloop does, so that wait(stages - 1) in step c always covers chunk c's group.
    for (std::uint64_t c = 0; c < pre; ++c) {
      if (c < chunks) emit_chunk(t, c, out);
      out.push_back(TensorLayout::simple(OpKind::kCommit));
    }
    return true;
  }
  if (step <= chunks) {
    const std::uint64_t c = step - 1;
    if (c + pre < chunks) emit_chunk(t, c + pre, out);
    out.push_back(TensorLayout::simple(OpKind::kCommit));
    out.push_back(TensorLayout::count_op(OpKind::kWait, pre));
    out.push_back(TensorLayout::simple(OpKind::kBarrier));
    const std::uint64_t kc = std::min(spec_.block_k, t.k1 - (t.k0 + c * spec_.block_k));
    out.push_back(TensorLayout::shared(OpKind::kSharedRead, spec_.a, t.r, kc * elem_));
    out.push_back(TensorLayout::shared(OpKind::kSharedRead, spec_.b, t.c, kc * elem_));
    out.push_back(TensorLayout::mma(t.r, t.c, kc));
    out.push_back(TensorLayout::simple(OpKind::kBarrier));
    return true;
  }
  if (step == chunks + 1) {  // epilogue: fp32 accumulators -> C
    out.push_back(TensorLayout::count_op(OpKind::kElementwise, t.r * t.c));
    out.push_back(TensorLayout::shared(OpKind::kSharedWrite, spec_.c, t.r, t.c * elem_));
    out.push_back(TensorLayout::tile(OpKind::kStore, spec_.c, t.bh, spec_.m, spec_.n, elem_, t.i * spec_.block_m, t.r,
                                     t.j * spec_.block_n, t.c));
    return true;
  }
  return false;
}

}  // namespace attnsim::kernels
