// standard's GEMMs on sm_90 are warp-specialized (cuBLAS nvjet, e.g.
// nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_TNT in kernels.csv: 384 threads, 1x2 clusters): a
// TMA producer warp group and two wgmma consumer groups over a ring of mbarrier-guarded stages.
// Their bytes with the L2 off stay the closed forms'; on sm_80 the GEMMs keep one warp group.
#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/io_counts.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

core::Workload standard_fwd(std::uint64_t seq, std::uint64_t head_dim = 128) {
  core::Workload w;
  w.kernel = "standard";
  w.batch = 1;
  w.heads = 4;
  w.kv_heads = 4;
  w.seq_q = seq;
  w.seq_kv = seq;
  w.head_dim = head_dim;
  return w;
}

TEST(GemmWarpSpecialized, HopperGemmsAreOneProducerAndTwoWgmmaConsumerGroups) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  const core::TileProgram p = make_program(standard_fwd(1024), h100);
  for (std::size_t l : {std::size_t{0}, std::size_t{2}}) {  // QK^T and PV
    const core::KernelLaunch& g = *p.launches[l];
    const auto groups = g.warp_groups();
    ASSERT_EQ(groups.size(), 3u) << g.name();
    EXPECT_EQ(groups[0].role, core::WarpRole::kProducer);
    // setmaxnreg as CUTLASS's sm90 cooperative kernels: 40 for the producer, the rest of the
    // 384 x 168 launch allocation for the consumers: (384 x 168 - 128 x 40) / 256 = 232.
    EXPECT_EQ(groups[0].regs_per_thread, 40u);
    EXPECT_EQ(groups[1].regs_per_thread, 232u);
    EXPECT_EQ(groups[2].role, core::WarpRole::kConsumer);
    EXPECT_EQ(g.shape().cluster_size, 2u);
    EXPECT_EQ(g.mbarriers().size(), 2 * p.workload.stages);
    int wgmma = 0, tma = 0;
    std::vector<core::TileOp> ops;
    for (std::uint32_t group = 0; group < 3; ++group)
      for (std::uint64_t step = 0; ops.clear(), g.emit_group_step(0, group, step, ops); ++step)
        for (const auto& op : ops) {
          if (op.kind == core::OpKind::kMma) {
            EXPECT_EQ(group == 0, false) << "the producer issues no MMA";
            wgmma += op.async && op.flavour == core::MmaFlavour::kWgmma;
          }
          if (op.kind == core::OpKind::kLoad) {
            EXPECT_EQ(group, 0u) << "only the producer loads";
            tma += op.bulk && op.barrier != core::kNoBarrier;
          }
        }
    EXPECT_GT(wgmma, 0);
    EXPECT_GT(tma, 0);
  }
  EXPECT_EQ(make_program(standard_fwd(1024), config::load_device("a100-40gb")).launches[0]->warp_groups().size(), 1u);
}

// Every consumer MMA of chunk c waits for phase c / stages of full[c % stages] first, and the
// producer refills buffer s only after phase c / stages - 1 of empty[s], at every ring depth.
TEST(GemmWarpSpecialized, EveryMmaWaitsForItsChunkAndEveryLoadForItsBuffer) {
  const core::DeviceSpec h200 = config::load_device("h200");
  for (std::uint32_t stages : {1u, 2u, 3u, 4u}) {
    core::Workload w = standard_fwd(512, 64);
    w.stages = stages;
    const core::TileProgram p = make_program(w, h200);
    const core::KernelLaunch& pv = *p.launches[2];  // k = 512: 8 chunks
    std::vector<core::TileOp> ops;
    std::uint64_t loads = 0;
    for (std::uint64_t c = 0; ops.clear(), pv.emit_group_step(0, 0, c, ops); ++c) {
      bool waited = c < stages;
      for (const auto& op : ops) {
        if (op.kind == core::OpKind::kMbarWait)
          waited = op.barrier == stages + c % stages && op.count == c / stages - 1;
        if (op.kind == core::OpKind::kLoad) {
          EXPECT_TRUE(waited) << "stages " << stages << " chunk " << c;
          EXPECT_EQ(op.barrier, c % stages);
          ++loads;
        }
      }
    }
    EXPECT_EQ(loads, 2u * 8);
    for (std::uint32_t consumer = 1; consumer <= 2; ++consumer) {
      std::uint64_t mmas = 0;
      for (std::uint64_t c = 0; ops.clear(), pv.emit_group_step(0, consumer, c, ops); ++c) {
        bool waited = false;
        for (const auto& op : ops) {
          if (op.kind == core::OpKind::kMbarWait) waited = op.barrier == c % stages && op.count == c / stages;
          if (op.kind == core::OpKind::kMma) {
            EXPECT_TRUE(waited) << "stages " << stages << " chunk " << c;
            ++mmas;
          }
        }
      }
      EXPECT_EQ(mmas, 8u);
    }
  }
}

// Odd tile counts (QK^T: 5 column tiles per row, PV: 3 row blocks of 256 for 640 rows) pad the
// grid to whole clusters; every byte with the L2 off is still the closed forms'.
TEST(GemmWarpSpecialized, L2OffBytesEqualTheClosedForms) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm", {{"l2.capacity_bytes", "0"}});
  for (std::uint64_t seq : {640u, 1024u}) {
    const core::TileProgram p = make_program(standard_fwd(seq, 64), h100);
    const auto r = engine::simulate(h100, p);
    const auto f = closed_form_traffic(p.workload);
    ASSERT_EQ(r.size(), f.size());
    for (std::size_t l = 0; l < r.size(); ++l) {
      EXPECT_EQ(r[l].tensors.dram.total_read(), f[l].traffic.total_read()) << r[l].name << " N=" << seq;
      EXPECT_EQ(r[l].tensors.dram.total_write(), f[l].traffic.total_write()) << r[l].name << " N=" << seq;
    }
  }
}

// The ring of stages hides the TMA latency: with one stage the consumers wait for every chunk
// of PV's k = 2048 (32 chunks of 64), with two less, with four the loads run ahead.
TEST(GemmWarpSpecialized, DeeperRingIsFaster) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  auto pv_time = [&](std::uint32_t stages) {
    core::Workload w = standard_fwd(2048);
    w.stages = stages;
    return engine::simulate(h100, make_program(w, h100)).at(2).totals.time_ns;
  };
  const double one = pv_time(1), two = pv_time(2), four = pv_time(4);
  EXPECT_LT(two, 0.9 * one);
  EXPECT_LT(four, 0.9 * two);
}

}  // namespace
}  // namespace attnsim::kernels
