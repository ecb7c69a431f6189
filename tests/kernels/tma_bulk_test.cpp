// GEMM operands on sm_90+ are TMA bulk copies (TileOp::bulk): the engine does not charge them
// against the per-warp / per-SM in-flight allowances of ordinary loads (their bytes in flight
// are bounded by the pipeline's stages instead); on sm_80 they are cp.async loads as before.
#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/io_counts.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

core::Workload standard_fwd(std::uint64_t seq = 1024) {
  core::Workload w;
  w.kernel = "standard";
  w.batch = 1;
  w.heads = 4;
  w.kv_heads = 4;
  w.seq_q = seq;
  w.seq_kv = seq;
  w.head_dim = 128;
  w.gemm_cluster = 1;  // one CTA per operand tile, on every device (see TwoCtaClusters below)
  return w;
}

int bulk_loads(const core::TileProgram& p, std::size_t launch, int& loads) {
  int bulk = 0;
  loads = 0;
  std::vector<core::TileOp> ops;
  for (std::uint64_t step = 0; step < 4; ++step) {
    ops.clear();
    if (!p.launches[launch]->emit_step(0, step, ops)) break;
    for (const auto& op : ops)
      if (op.kind == core::OpKind::kLoad) {
        ++loads;
        bulk += op.bulk ? 1 : 0;
      }
  }
  return bulk;
}

TEST(TmaBulkLoads, HopperGemmOperandsAreBulkAmpereOnesAreNot) {
  for (const char* dev : {"h200", "h100-sxm", "a100-40gb"}) {
    const core::DeviceSpec d = config::load_device(dev);
    const core::TileProgram p = make_program(standard_fwd(), d);
    const bool hopper = d.compute_capability >= 90;
    for (std::size_t l : {std::size_t{0}, std::size_t{2}}) {  // QK^T and PV; the softmax is not a GEMM
      int loads = 0;
      const int bulk = bulk_loads(p, l, loads);
      EXPECT_GT(loads, 0) << dev;
      EXPECT_EQ(bulk, hopper ? loads : 0) << dev << " launch " << l;
    }
    int loads = 0;
    EXPECT_EQ(bulk_loads(p, 1, loads), 0) << dev << ": the softmax's loads are ordinary";
  }
}

TEST(TmaBulkLoads, BulkLoadsAreNotLimitedByInFlightAllowances) {
  // The same h200 GEMMs as cp.async loads (compute capability 8.0) are held to 12 warps x 1264 B
  // in flight per CTA; as bulk copies they are not, and run markedly faster once the GEMM is
  // bandwidth-bound (N = 4096: several waves); the L2 requests are equal, while the L2 lookups
  // (lts__t_bytes: a read whose near copy was evicted is looked up in both partitions) and the
  // DRAM bytes (re-fetches) depend on the eviction order and so on timing (0.01 % of QK^T's L2
  // bytes, 0.04 % of its DRAM reads).
  // (At N = 1024, one partial wave, QK^T is latency-bound and bulk copies gain nothing.)
  const core::DeviceSpec hopper = config::load_device("h200");
  const core::DeviceSpec as_ampere = config::load_device("h200", {{"compute_capability", "80"}});
  const auto a = engine::simulate(hopper, make_program(standard_fwd(4096), hopper));
  const auto b = engine::simulate(as_ampere, make_program(standard_fwd(4096), as_ampere));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t l : {std::size_t{0}, std::size_t{2}}) {
    const double ta = a[l].totals.time_ns;
    const double tb = b[l].totals.time_ns;
    EXPECT_LT(ta, 0.8 * tb) << a[l].name << ": bulk " << ta << " ns vs credited " << tb << " ns";
    EXPECT_EQ(a[l].totals.memory.l2_request_bytes, b[l].totals.memory.l2_request_bytes)
        << a[l].name;
    const double la = static_cast<double>(a[l].tensors.lts.total_read() + a[l].tensors.lts.total_write());
    const double lb = static_cast<double>(b[l].tensors.lts.total_read() + b[l].tensors.lts.total_write());
    EXPECT_NEAR(la / lb, 1.0, 1e-3) << a[l].name;
    const double da = static_cast<double>(a[l].tensors.dram.total_read() + a[l].tensors.dram.total_write());
    const double db = static_cast<double>(b[l].tensors.dram.total_read() + b[l].tensors.dram.total_write());
    EXPECT_NEAR(da / db, 1.0, 1e-3) << a[l].name;
  }
}

// cuBLAS's sm_90 GEMMs run as 2-CTA clusters ("_1x2_" in every nvjet name of kernels.csv) that
// multicast one operand tile to both CTAs: the default on compute capability 9.0+, and the L2
// sees each shared tile requested once per pair. The L2 requests (every load and store, in
// whole sectors here) equal the closed forms' bytes for either cluster size, and with pairs
// QK^T requests a third fewer Q + K bytes (per pair one 256 x 64 Q chunk instead of two, beside
// two 128 x 64 K chunks) and PV a sixth fewer P + V bytes (one 64 x 128 V chunk instead of two,
// beside two 256 x 64 P chunks).
TEST(TmaBulkLoads, TwoCtaClustersRequestTheSharedOperandOncePerPair) {
  EXPECT_EQ(make_program(standard_fwd(), config::load_device("a100-40gb")).workload.gemm_cluster, 1u);
  core::Workload w = standard_fwd(1024);
  w.gemm_cluster = 0;
  const core::DeviceSpec h200 = config::load_device("h200");
  const core::TileProgram p2 = make_program(w, h200);
  EXPECT_EQ(p2.workload.gemm_cluster, 2u);
  w.gemm_cluster = 1;
  const core::TileProgram p1 = make_program(w, h200);
  const auto r2 = engine::simulate(h200, p2);
  const auto r1 = engine::simulate(h200, p1);
  const auto f2 = kernels::closed_form_traffic(p2.workload);
  const auto f1 = kernels::closed_form_traffic(p1.workload);
  double requested_reads[2][3] = {};
  for (std::size_t l : {std::size_t{0}, std::size_t{2}}) {
    for (int c = 0; c < 2; ++c) {
      const auto& r = c ? r2 : r1;
      const auto& f = c ? f2 : f1;
      const double req = static_cast<double>(r[l].totals.memory.l2_request_bytes);
      EXPECT_EQ(req, static_cast<double>(f[l].traffic.total_read() + f[l].traffic.total_write()))
          << r[l].name << " cluster " << (c + 1);
      requested_reads[c][l] = req - static_cast<double>(f[l].traffic.total_write());
    }
    EXPECT_DOUBLE_EQ(requested_reads[1][l], requested_reads[0][l] * (l == 0 ? 4.0 / 6.0 : 5.0 / 6.0)) << r2[l].name;
  }
}

// The two CTAs of a pair each load one half of the shared chunk's rows, back to back, and the
// unshared operand whole: QK^T's CTAs 0 and 1 (row block 0, column tiles 0 and 1) split the
// 256-row Q chunk 128 / 128; PV's CTAs 0 and 1 (row blocks 0 and 1, the one column tile of
// d = 128) split the 64-row V chunk 32 / 32. A CTA without a partner (QK^T with one column
// tile: seq_kv = 128) loads the chunk whole.
TEST(TmaBulkLoads, TheCtasOfAPairLoadOneHalfOfTheSharedChunkEach) {
  const core::DeviceSpec h200 = config::load_device("h200");
  core::Workload w = standard_fwd(512);
  w.gemm_cluster = 2;
  const core::TileProgram p = make_program(w, h200);
  auto loads = [&](std::size_t launch, std::uint64_t cta, core::Tensor t) {
    std::vector<core::TileOp> ops, out;
    p.launches[launch]->emit_step(cta, 0, ops);  // prologue: chunk 0 (and 1, 2) of both operands
    for (const auto& op : ops)
      if (op.kind == core::OpKind::kLoad && op.tensor == t) out.push_back(op);
    return out;
  };
  // CTAs 0 and 1 of `launch` load `half` rows each of every chunk of `t`, back to back.
  auto expect_halves = [&](std::size_t launch, core::Tensor t, std::uint32_t half) {
    const auto first = loads(launch, 0, t), second = loads(launch, 1, t);
    ASSERT_FALSE(first.empty());
    ASSERT_EQ(first.size(), second.size());
    for (std::size_t c = 0; c < first.size(); ++c) {
      EXPECT_EQ(first[c].rows, half);
      EXPECT_EQ(second[c].rows, half);
      EXPECT_EQ(second[c].addr, first[c].addr + half * first[c].row_stride);
    }
  };
  expect_halves(0, core::Tensor::kQ, 128);
  for (std::uint64_t cta : {0, 1})
    for (const auto& k : loads(0, cta, core::Tensor::kK)) EXPECT_EQ(k.rows, 128u) << "K is not shared in QK^T";
  expect_halves(2, core::Tensor::kV, 32);
  for (std::uint64_t cta : {0, 1})
    for (const auto& pl : loads(2, cta, core::Tensor::kP)) EXPECT_EQ(pl.rows, 256u) << "P is not shared in PV";
  w.seq_kv = 128;  // one column tile per row block: QK^T's CTAs have no partner
  const core::TileProgram lone = make_program(w, h200);
  std::vector<core::TileOp> ops;
  lone.launches[0]->emit_step(0, 0, ops);
  int q_loads = 0;
  for (const auto& op : ops)
    if (op.kind == core::OpKind::kLoad && op.tensor == core::Tensor::kQ) {
      EXPECT_EQ(op.rows, 256u);
      ++q_loads;
    }
  EXPECT_GT(q_loads, 0);
}

// The nvjet launches reserve 16580 B of shared memory beyond their operand stages (kernels.csv:
// 213188 B = 4 stages x (256 + 128) x 64 x 2 B + 16580 B): the epilogue stages the output tile
// through shared memory for its TMA store. Each GEMM writes its whole output once to shared
// memory (S for QK^T, O for PV), and stores it to global memory once.
TEST(TmaBulkLoads, GemmEpiloguesStageTheOutputTileThroughSharedMemory) {
  const core::DeviceSpec h200 = config::load_device("h200");
  core::Workload w = standard_fwd(512);
  const core::TileProgram p = make_program(w, h200);
  const auto r = engine::simulate(h200, p);
  const core::Bytes s_bytes = 4 * 512 * 512 * 2, o_bytes = 4 * 512 * 128 * 2;
  EXPECT_EQ(r[0].tensors.smem[core::Tensor::kS].write, s_bytes);
  EXPECT_GT(r[0].tensors.lts[core::Tensor::kS].write, 0u);
  EXPECT_EQ(r[2].tensors.smem[core::Tensor::kO].write, o_bytes);
  EXPECT_EQ(r[1].tensors.smem[core::Tensor::kP].write, 0u) << "the softmax rows do not stage P";
}

}  // namespace
}  // namespace attnsim::kernels
