// The warp-specialized sm_90 GEMM of GemmLaunch (cuBLAS nvjet, CUTLASS "TMA warp-specialized
// cooperative" kernels): a producer warp group streams the A / B k-chunks by TMA into a ring of
// `stages` shared-memory buffers, each guarded by a full and an empty mbarrier; the consumer warp
// groups split the tile's rows, wait for a chunk, issue it as async wgmma and release the buffer
// of the previous chunk once wgmma.wait_group 1 says its MMAs are done.
#include <algorithm>

#include "kernels/gemm_launch.h"
#include "kernels/kernel_defaults.h"

namespace attnsim::kernels {

using core::OpKind;
using core::TileOp;

namespace {

TileOp mbar(OpKind kind, std::uint64_t barrier, std::uint64_t count) {
  TileOp o;
  o.kind = kind;
  o.barrier = static_cast<std::uint8_t>(barrier);
  o.count = count;
  return o;
}

}  // namespace

std::vector<core::WarpGroupSpec> GemmLaunch::warp_groups() const {
  if (!ws_) return KernelLaunch::warp_groups();
  // setmaxnreg: the producer gives registers back, the consumers share the rest of the CTA's
  // launch allocation, in multiples of 8 up to 255 (PTX ISA, setmaxnreg: range 24..256).
  const std::uint32_t regs = spec_.shape.regs_per_thread;
  const std::uint32_t producer = std::min(spec_.producer_regs, regs);
  const std::uint64_t total = static_cast<std::uint64_t>(spec_.shape.warps_per_cta()) * 32 * regs;
  const std::uint64_t left = (total - 128ull * producer) / (128ull * consumers());
  const auto consumer = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(left / 8 * 8, 24, 248));
  std::vector<core::WarpGroupSpec> g{{core::WarpRole::kProducer, 4, producer}};
  for (std::uint32_t c = 0; c < consumers(); ++c) g.push_back({core::WarpRole::kConsumer, 4, consumer});
  return g;
}

// full[s] = s: one arrival (the producer's arrive.expect_tx) plus the chunk's bytes; empty[s] =
// stages + s: one arrival per consumer warp group of every CTA the chunk is delivered to.
std::vector<std::uint32_t> GemmLaunch::mbarriers() const {
  if (!ws_) return {};
  std::vector<std::uint32_t> b(2 * spec_.stages, 1);
  for (std::uint32_t s = 0; s < spec_.stages; ++s) b[spec_.stages + s] = consumers() * shape_.cluster_size;
  return b;
}

bool GemmLaunch::ws_tile(std::uint64_t cta, Tile& t) const {
  const std::uint64_t per = shape_.grid_x, cl = shape_.cluster_size;
  const std::uint64_t bh = cta / per, idx = cta % per;
  const std::uint64_t c = idx / cl, rank = idx % cl;
  std::uint64_t i = 0, j = 0;
  if (cl == 1) {
    i = idx / t_n_, j = idx % t_n_;
  } else if (spec_.shared == GemmSpec::Shared::kA) {  // partners (i, j), (i, j^1)
    const std::uint64_t pairs = core::ceil_div(t_n_, cl);
    i = c / pairs, j = (c % pairs) * cl + rank;
  } else {  // partners (i, j), (i^1, j)
    i = (c / t_n_) * cl + rank, j = c % t_n_;
  }
  if (i >= t_m_ || j >= t_n_) return false;  // pads the grid to whole clusters
  t = tile_at(bh, i, j);
  return true;
}

bool GemmLaunch::emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                                 std::vector<TileOp>& out) const {
  if (!ws_) return KernelLaunch::emit_group_step(cta, group, step, out);
  Tile t{};
  if (!ws_tile(cta, t)) return false;
  return group == 0 ? ws_producer_step(t, step, out) : ws_consumer_step(t, group - 1, step, out);
}

bool GemmLaunch::ws_producer_step(const Tile& t, std::uint64_t c, std::vector<TileOp>& out) const {
  const std::uint64_t chunks = core::ceil_div(t.k1 - t.k0, spec_.block_k);
  if (c >= chunks) return false;
  const std::uint64_t s = c % spec_.stages;
  if (c >= spec_.stages) out.push_back(mbar(OpKind::kMbarWait, spec_.stages + s, c / spec_.stages - 1));
  const std::uint64_t k0 = t.k0 + c * spec_.block_k;
  const std::uint64_t kc = std::min(spec_.block_k, t.k1 - k0);
  // This CTA's buffer receives the whole A and B chunks: its own loads and its partner's half.
  TileOp expect = mbar(OpKind::kMbarArrive, s, 1);
  expect.tx_bytes = static_cast<std::uint32_t>((t.r + t.c) * kc * elem_);
  out.push_back(expect);
  const std::size_t first = out.size();
  emit_chunk(t, c, out);  // A then B, the shared operand halved when a partner takes the other half
  const bool partner = shared_half(t, k0) != 0;
  const std::size_t shared = first + (spec_.shared == GemmSpec::Shared::kA ? 0 : 1);
  for (std::size_t o = first; o < out.size(); ++o) {
    out[o].barrier = static_cast<std::uint8_t>(s);
    if (partner && o == shared) out[o].multicast = static_cast<std::uint8_t>((1u << shape_.cluster_size) - 1);
  }
  return true;
}

bool GemmLaunch::ws_consumer_step(const Tile& t, std::uint32_t consumer, std::uint64_t c,
                                  std::vector<TileOp>& out) const {
  const std::uint64_t chunks = core::ceil_div(t.k1 - t.k0, spec_.block_k);
  const std::uint64_t per = core::ceil_div(t.r, std::uint64_t{consumers()});
  const std::uint64_t row0 = std::min<std::uint64_t>(t.r, consumer * per);
  const std::uint64_t rows = std::min(per, t.r - row0);
  // Release a buffer on every CTA whose producer wrote into it: both cluster members when the
  // chunk was multicast, else this CTA (counting for the absent partner's consumers too).
  auto release = [&](std::uint64_t chunk) {
    const bool partner = shared_half(t, t.k0 + chunk * spec_.block_k) != 0;
    TileOp a = mbar(OpKind::kMbarArrive, spec_.stages + chunk % spec_.stages, partner ? 1 : shape_.cluster_size);
    if (partner) a.multicast = static_cast<std::uint8_t>((1u << shape_.cluster_size) - 1);
    out.push_back(a);
  };
  if (c < chunks) {
    out.push_back(mbar(OpKind::kMbarWait, c % spec_.stages, c / spec_.stages));
    const std::uint64_t kc = std::min(spec_.block_k, t.k1 - (t.k0 + c * spec_.block_k));
    if (rows > 0) {
      out.push_back(TensorLayout::shared(OpKind::kSharedRead, spec_.a, rows, kc * elem_));
      out.push_back(TensorLayout::shared(OpKind::kSharedRead, spec_.b, t.c, kc * elem_));
      TileOp m = TensorLayout::mma(rows, t.c, kc);
      m.flavour = core::MmaFlavour::kWgmma;
      m.async = true;
      out.push_back(m);
    }
    // Keep one chunk's MMAs in flight while the next is issued (CUTLASS's K_PIPE_MMAS = 1); a
    // one-stage ring cannot (the producer waits for that very buffer), so it waits for all.
    const std::uint64_t lag = spec_.stages > 1 ? 1 : 0;
    out.push_back(mbar(OpKind::kMmaCommit, core::kNoBarrier, 0));
    out.push_back(mbar(OpKind::kMmaWait, core::kNoBarrier, lag));
    if (c >= lag) release(c - lag);
    return true;
  }
  if (c == chunks) {  // the last chunk's MMAs, then the epilogue: fp32 accumulators -> C rows
    out.push_back(mbar(OpKind::kMmaWait, core::kNoBarrier, 0));
    if (chunks > 0 && spec_.stages > 1) release(chunks - 1);
    if (rows == 0) return true;
    out.push_back(TensorLayout::count_op(OpKind::kElementwise, rows * t.c));
    out.push_back(TensorLayout::shared(OpKind::kSharedWrite, spec_.c, rows, t.c * elem_));
    out.push_back(TensorLayout::tile(OpKind::kStore, spec_.c, t.bh, spec_.m, spec_.n, elem_,
                                     t.i * spec_.block_m + row0, rows, t.j * spec_.block_n, t.c));
    return true;
  }
  return false;
}

}  // namespace attnsim::kernels
