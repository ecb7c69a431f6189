// A tiled, multi-stage GEMM launch C = op(A)·op(B) per (batch, head) with causal pruning: the
// building block of standard attention forward and backward. No split-K, no epilogue fusion.
#pragma once

#include <string>
#include <vector>

#include "kernels/tensor_layout.h"
#include "sim/core/tile_program.h"

namespace attnsim::kernels {

struct GemmSpec {
  enum class ALayout : std::uint8_t { kRowMajor, kTransposed };  // A stored M×K, or K×M (Pᵀ, dSᵀ)
  enum class BLayout : std::uint8_t { kNT, kNN };                // B stored N×K (Kᵀ, Vᵀ), or K×N
  // kSkipTiles: output tiles right of the diagonal are not launched (S, dP);
  // kKPrefix: k-loop stops at the diagonal (O, dQ); kKSuffix: k-loop starts at it (dV, dK).
  enum class Causal : std::uint8_t { kNone, kSkipTiles, kKPrefix, kKSuffix };

  std::string name;
  core::Tensor a = core::Tensor::kQ, b = core::Tensor::kK, c = core::Tensor::kS;
  ALayout a_layout = ALayout::kRowMajor;
  BLayout b_layout = BLayout::kNT;
  bool b_per_kv_head = false;                 // B is K or V (GQA: shared by a head group)
  std::uint64_t m = 0, n = 0, k = 0;          // per (batch, head)
  std::uint64_t block_m = 0, block_n = 0, block_k = 0;
  std::uint32_t stages = 1;
  Causal causal = Causal::kNone;
  std::uint64_t causal_off = 0;               // seq_kv - seq_q
  core::LaunchShape shape;                    // threads, registers, shared memory (grid filled in)
  bool bulk_loads = false;                    // operands by TMA bulk copies (sm_90+), see TileOp::bulk
  // Thread-block clusters of `cluster` CTAs (1 or 2) whose members share one operand tile per
  // k-chunk, multicast by TMA (cuBLAS nvjet "1x2" kernels): kA pairs the column tiles (i, j) and
  // (i, j^1) of one row block (same A tile), kB the row tiles (i, j) and (i^1, j) (same B
  // chunk). Each member loads half of the shared tile's rows (CUTLASS splits a multicast tile
  // among the cluster's CTAs); a chunk only one member needs (causal k ranges, no partner) is
  // loaded whole.
  enum class Shared : std::uint8_t { kA, kB };
  std::uint32_t cluster = 1;
  Shared shared = Shared::kA;
  // Warp-specialized (cuBLAS nvjet / CUTLASS sm90 TMA warp-specialized cooperative kernels,
  // gemm_ws.cpp): one producer warp group issues the TMA loads of each k-chunk into a ring of
  // `stages` buffers guarded by mbarriers, the other warp groups split the tile's rows and run
  // async wgmma. Needs bulk_loads, warps a multiple of 4 (at least 8) and no causal mode;
  // otherwise the launch is the multistage kernel above. Its clusters are real
  // (LaunchShape::cluster_size): the partners are consecutive CTAs and multicast their halves.
  bool warp_specialized = false;
  // setmaxnreg.dec of the producer: CUTLASS's sm90 warp-specialized GEMM kernels
  // (gemm/kernel/sm90_gemm_tma_warpspecialized_cooperative.hpp: LoadRegisterRequirement 40,
  // MmaRegisterRequirement 232 for 384 threads at 168 registers).
  std::uint32_t producer_regs = 40;
};

class GemmLaunch : public core::KernelLaunch {
 public:
  GemmLaunch(GemmSpec spec, const core::Workload& w);
  std::string name() const override { return spec_.name; }
  core::LaunchShape shape() const override { return shape_; }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override;
  std::vector<core::WarpGroupSpec> warp_groups() const override;
  bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                       std::vector<core::TileOp>& out) const override;
  std::vector<std::uint32_t> mbarriers() const override;

 private:
  struct Tile {
    std::uint64_t bh, i, j, r, c, k0, k1;
  };
  Tile tile_at(std::uint64_t bh, std::uint64_t i, std::uint64_t j) const;
  Tile tile_of(std::uint64_t cta) const;
  std::uint64_t tiles_in_row(std::uint64_t i) const;
  // This CTA's part of the shared operand's chunk starting at absolute k `k_abs`: 0 = all of it
  // (no partner needs it), 1 = first half of its rows, 2 = second half.
  int shared_half(const Tile& t, std::uint64_t k_abs) const;
  void emit_chunk(const Tile& t, std::uint64_t chunk, std::vector<core::TileOp>& out) const;
  // Warp-specialized (gemm_ws.cpp): the tile of CTA `cta` (false: a CTA that pads the grid to
  // whole clusters), the producer's and a consumer's steps.
  bool ws_tile(std::uint64_t cta, Tile& t) const;
  bool ws_producer_step(const Tile& t, std::uint64_t step, std::vector<core::TileOp>& out) const;
  bool ws_consumer_step(const Tile& t, std::uint32_t consumer, std::uint64_t step,
                        std::vector<core::TileOp>& out) const;
  std::uint32_t consumers() const { return spec_.shape.warps_per_cta() / 4 - 1; }

  GemmSpec spec_;
  TensorLayout layout_;
  core::Bytes elem_;
  std::uint64_t t_m_ = 0, t_n_ = 0, tiles_per_matrix_ = 0;
  std::vector<std::uint64_t> row_start_;  // kSkipTiles: first tile index of each row block
  core::LaunchShape shape_;
  bool ws_ = false;                      // warp_specialized and its conditions met
  std::uint64_t ws_clusters_ = 0;        // clusters per (batch, head) matrix
};

}  // namespace attnsim::kernels
