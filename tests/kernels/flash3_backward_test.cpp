// flash3 backward (FA-3's Hopper backward): default tiles per head dim, launches, bytes equal to
// the closed form with the L2 off (op streams and engine), the schedule's mechanisms, and the
// functional mode's gradients against plain attention.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <vector>

#include "kernels/flash3_bwd.h"
#include "kernels/functional.h"
#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/errors.h"
#include "sim/core/io_counts.h"
#include "sim/core/traffic_counter.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

core::Workload fa3_bwd(std::uint64_t d, bool causal, std::uint64_t kv_heads = 0) {
  core::Workload w;
  w.kernel = "flash3";
  w.batch = 1;
  w.heads = 4;
  w.kv_heads = kv_heads;
  w.seq_q = causal ? 300 : 270;  // ragged against 64-, 80- and 128-row blocks
  w.seq_kv = 300;
  w.head_dim = d;
  w.causal = causal;
  w.pass = core::Pass::kFwdBwd;
  return w;
}

TEST(Flash3BwdDefaults, TilesAsFa3LaunchTemplateChoosesThemOnSm90) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  struct Want {
    std::uint64_t d;
    bool causal;
    std::uint64_t bm, bn;
    std::uint32_t warps;
  };
  // flash_bwd_launch_template.h, run_mha_bwd_hdim*, Arch >= 90.
  for (const Want& x : {Want{64, false, 128, 128, 12}, Want{64, true, 128, 128, 12}, Want{96, false, 64, 128, 12},
                        Want{128, false, 80, 128, 12}, Want{128, true, 64, 128, 12}, Want{192, false, 64, 96, 16},
                        Want{256, true, 64, 80, 12}}) {
    const core::TileProgram p = make_program(fa3_bwd(x.d, x.causal), h100);
    const std::string at = "d" + std::to_string(x.d) + (x.causal ? " causal" : "");
    EXPECT_EQ(p.workload.bwd_block_m, x.bm) << at;
    EXPECT_EQ(p.workload.bwd_block_n, x.bn) << at;
    EXPECT_EQ(p.workload.bwd_warps, x.warps) << at;
    ASSERT_EQ(p.launches.size(), 4u) << at;  // forward, preprocess, main, dQ postprocess
    EXPECT_LE(p.launches[2]->shape().smem_dynamic_bytes, 227u * 1024) << at;
    EXPECT_EQ(p.launches[2]->warp_groups().size(), 2u + (x.warps / 4 - 1)) << at;
  }
  // P stays in registers for the dV GEMM (Mma_dKV_is_RS) where the atoms allow it.
  EXPECT_TRUE(flash3_bwd_default_tile(128, false).dkv_rs());
  EXPECT_FALSE(flash3_bwd_default_tile(256, false).dkv_rs());
  // GQA adds the fp32 dK and dV accumulators' conversions.
  EXPECT_EQ(make_program(fa3_bwd(64, false, 2), h100).launches.size(), 6u);
  // FA-3 has no fp8 backward: the error names `pass`.
  core::Workload w = fa3_bwd(128, false);
  w.dtype = core::DType::kFp8;
  try {
    make_program(w, h100);
    ADD_FAILURE() << "fp8 backward accepted";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pass"), std::string::npos) << e.what();
  }
}

TEST(Flash3BwdBytes, OpStreamsAndL2OffEngineEqualTheClosedFormPerLaunch) {
  const core::DeviceSpec dev = config::load_device("h100-sxm", {{"l2.capacity_bytes", "0"}});
  int bad = 0;
  for (std::uint64_t d : {64, 128})
    for (bool causal : {false, true})
      for (std::uint64_t kvh : {4, 2}) {
        const core::TileProgram p = make_program(fa3_bwd(d, causal, kvh), dev);
        const auto want = closed_form_traffic(p.workload);
        const auto ops = core::TrafficCounter::count(p);
        const auto got = engine::simulate(dev, p);
        ASSERT_EQ(want.size(), p.launches.size());
        ASSERT_EQ(got.size(), p.launches.size());
        for (std::size_t l = 0; l < want.size(); ++l) {
          EXPECT_EQ(want[l].kernel_name, p.launches[l]->name());
          for (std::size_t t = 0; t < core::kNumTensors; ++t) {
            const auto& e = want[l].traffic.by_tensor[t];
            if (ops[l].traffic.by_tensor[t] == e && got[l].tensors.dram.by_tensor[t] == e) continue;
            ++bad;
            ADD_FAILURE() << want[l].kernel_name << " " << core::to_string(static_cast<core::Tensor>(t)) << " d" << d
                          << (causal ? " causal" : "") << " kv_heads " << kvh << ": closed form read " << e.read
                          << " write " << e.write << ", ops read " << ops[l].traffic.by_tensor[t].read << " write "
                          << ops[l].traffic.by_tensor[t].write << ", engine read "
                          << got[l].tensors.dram.by_tensor[t].read << " write "
                          << got[l].tensors.dram.by_tensor[t].write;
          }
        }
      }
  EXPECT_EQ(bad, 0);
}

// Compulsory bytes (each distinct byte once per launch) against the op streams' distinct ranges.
TEST(Flash3BwdBytes, DistinctBytesOfTheOpStreamsEqualTheCompulsoryClosedForm) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  int bad = 0;
  for (std::uint64_t d : {64, 128})
    for (bool causal : {false, true})
      for (std::uint64_t kvh : {4, 2}) {
        const core::TileProgram p = make_program(fa3_bwd(d, causal, kvh), h100);
        const auto want = compulsory_traffic(p.workload);
        const auto got = core::TrafficCounter::count_distinct(p);
        ASSERT_EQ(want.size(), got.size());
        for (std::size_t l = 0; l < want.size(); ++l)
          for (std::size_t t = 0; t < core::kNumTensors; ++t) {
            const auto& e = want[l].traffic.by_tensor[t];
            if (got[l].traffic.by_tensor[t] == e) continue;
            ++bad;
            ADD_FAILURE() << want[l].kernel_name << " " << core::to_string(static_cast<core::Tensor>(t)) << " d" << d
                          << (causal ? " causal" : "") << " kv_heads " << kvh << ": compulsory read " << e.read
                          << " write " << e.write << ", distinct read " << got[l].traffic.by_tensor[t].read
                          << " write " << got[l].traffic.by_tensor[t].write;
          }
      }
  EXPECT_EQ(bad, 0);
}

TEST(Flash3BwdBytes, CausalSkipsQueryBlocksAndDqAccumIsReduceAddedPerVisit) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  core::Workload w = fa3_bwd(128, false);
  w.seq_q = w.seq_kv = 2048;
  const auto full = closed_form_traffic(make_program(w, h100).workload);
  w.causal = true;
  const auto causal = closed_form_traffic(make_program(w, h100).workload);
  ASSERT_EQ(full[2].kernel_name, "flash3_bwd");
  const auto& f = full[2].traffic;
  const auto& c = causal[2].traffic;
  // Non-causal: every key block (16 of 128 keys) reads all of Q and dO and reduce-adds a dQ tile
  // per query block (26 of 80 rows, padded to 2080): 16 x 2048 rows, 16 x 2080 x 128 fp32.
  EXPECT_EQ(f[core::Tensor::kQ].read, 4u * 16 * 2048 * 128 * 2);
  EXPECT_EQ(f[core::Tensor::kDQAccum].write, 4u * 16 * 2080 * 128 * 4);
  EXPECT_EQ(f[core::Tensor::kK].read, 4u * 2048 * 128 * 2);
  // Causal (64 x 128 tiles): key block n starts at query block 2n: Σ (32 - 2n) = 272 of 512 visits.
  EXPECT_EQ(c[core::Tensor::kDQAccum].write, 4u * 272 * 64 * 128 * 4);
  EXPECT_EQ(c[core::Tensor::kQ].read, 4u * 272 * 64 * 128 * 2);
}

// The main kernel's warp groups emit one step per query block their key block visits (causal: the
// blocks from the diagonal on), so a CTA's ops in memory do not grow with the sequence.
TEST(Flash3BwdSchedule, EachWarpGroupEmitsOneStepPerQueryBlock) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  for (const bool causal : {false, true}) {
    std::size_t widest[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      core::Workload w = fa3_bwd(128, causal);
      w.seq_q = w.seq_kv = k == 0 ? 2048 : 16384;
      const core::TileProgram p = make_program(w, h100);
      const auto& launch = *p.launches[2];
      ASSERT_EQ(launch.name(), "flash3_bwd");
      const std::uint64_t blocks = core::ceil_div(w.seq_q, std::uint64_t{causal ? 64u : 80u});  // 80 (64) x 128 tiles
      std::vector<core::TileOp> ops;
      for (const std::uint64_t cta : {std::uint64_t{0}, std::uint64_t{1}}) {  // key blocks 0 and 1 of head 0
        for (std::uint32_t g = 0; g < launch.warp_groups().size(); ++g) {
          std::uint64_t steps = 0;
          for (; ops.clear(), launch.emit_group_step(cta, g, steps, ops); ++steps) widest[k] = std::max(widest[k], ops.size());
          EXPECT_EQ(steps, causal ? blocks - 2 * cta : blocks) << causal << " cta " << cta << " group " << g;
        }
      }
    }
    EXPECT_EQ(widest[1], widest[0]) << causal;
    EXPECT_LT(widest[1], 60u) << causal;
  }
}

double launch_ns(const core::Workload& w, const core::DeviceSpec& dev, std::size_t launch) {
  return engine::simulate(dev, make_program(w, dev))[launch].totals.time_ns;
}

// The backward does 2.5x the forward's MMA work: its main kernel takes longer than the forward,
// and causal masking roughly halves it.
TEST(Flash3BwdSchedule, MainKernelCostsMoreThanTheForwardAndCausalSkipsWork) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  core::Workload w = fa3_bwd(128, false);
  w.batch = 2;
  w.heads = 16;
  w.seq_q = w.seq_kv = 2048;
  const auto runs = engine::simulate(h100, make_program(w, h100));
  const double fwd = runs[0].totals.time_ns, bwd = runs[2].totals.time_ns;
  EXPECT_GT(bwd, 1.8 * fwd);
  EXPECT_LT(bwd, 4.0 * fwd);
  w.causal = true;
  const double causal = launch_ns(w, h100, 2);
  EXPECT_LT(causal, 0.7 * bwd);
  EXPECT_GT(causal, 0.35 * bwd);
}

TEST(Flash3BwdFunctional, OwnScheduleMatchesAttentionGradients) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  double worst32 = 0;
  for (std::uint64_t d : {32, 128})
    for (bool causal : {false, true})
      for (std::uint64_t kvh : {4, 2, 1}) {
        core::Workload w = fa3_bwd(d, causal, kvh);
        w.seq_q = causal ? 300 : 170;
        const core::Workload r = make_program(w, h100).workload;
        const std::string at = "d" + std::to_string(d) + (causal ? " causal" : "") + " kv_heads " + std::to_string(kvh);
        EXPECT_LT(run_functional(r, Precision::kFp64), 1e-12) << at;
        const double e32 = run_functional(r, Precision::kFp32);
        EXPECT_LT(e32, 1e-5) << at;
        worst32 = std::max(worst32, e32);
      }
  // fp16 storage (inputs, P and dS as wgmma operands, dQ, dK, dV in fp16): fp16's rounding, well
  // above fp32's and below a few units of fp16's 2^-11.
  core::Workload w = fa3_bwd(128, false, 2);
  const core::Workload r = make_program(w, h100).workload;
  const double e16 = run_functional(r, Precision::kFp16);
  EXPECT_GT(e16, 100 * worst32);
  EXPECT_LT(e16, 1e-2);
  std::cout << "flash3 backward functional max relative error (O, dQ, dK, dV): fp32 " << worst32 << ", fp16 " << e16
            << "\n";
}

}  // namespace
}  // namespace attnsim::kernels
