// flash3 (FlashAttention-3 forward): FA-3's default tiles and knobs, key and device validation,
// bytes exact against the closed form (op stream and engine with the L2 off), the schedule's
// mechanisms (intra-warp-group overlap and ping-pong raise tensor-pipe use), functional accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "kernels/flash3.h"
#include "kernels/functional.h"
#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"
#include "sim/core/io_counts.h"
#include "sim/core/traffic_counter.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

core::Workload fa3(std::uint64_t d, bool causal = false, core::DType dtype = core::DType::kFp16) {
  core::Workload w;
  w.kernel = "flash3";
  w.batch = 1;
  w.heads = 2048 / d;
  w.seq_q = w.seq_kv = 4096;
  w.head_dim = d;
  w.causal = causal;
  w.dtype = dtype;
  return w;
}

TEST(Flash3Defaults, TilesAndKnobsAsFa3ChoosesThemOnSm90) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  struct Want {
    std::uint64_t d;
    bool causal;
    core::DType dtype;
    std::uint64_t bm, bn;
    std::uint32_t wgs;
    bool pingpong;
    std::uint32_t warps;
  };
  using core::DType;
  // hopper/tile_size.h (tile_size_fwd_sm90) and UseSchedulerBarrier in the sm90 mainloop.
  for (const Want& x : {Want{64, false, DType::kFp16, 192, 192, 3, true, 16},
                        Want{64, true, DType::kFp16, 192, 128, 3, true, 16},
                        Want{128, false, DType::kFp16, 128, 176, 2, true, 12},
                        Want{128, true, DType::kFp16, 128, 128, 2, true, 12},
                        Want{256, false, DType::kFp16, 128, 80, 2, false, 12},
                        Want{256, false, DType::kBf16, 128, 80, 2, false, 12},
                        Want{64, false, DType::kFp8, 192, 160, 3, false, 16},
                        Want{128, false, DType::kFp8, 128, 224, 2, true, 12},
                        Want{256, true, DType::kFp8, 128, 128, 2, true, 12}}) {
    const core::Workload w = make_program(fa3(x.d, x.causal, x.dtype), h100).workload;
    const std::string at = "d" + std::to_string(x.d) + (x.causal ? " causal " : " ") + std::string(core::to_string(x.dtype));
    EXPECT_EQ(w.block_m, x.bm) << at;
    EXPECT_EQ(w.block_n, x.bn) << at;
    EXPECT_EQ(w.consumer_warpgroups, x.wgs) << at;
    EXPECT_EQ(w.pingpong, x.pingpong ? 1 : 0) << at;
    EXPECT_EQ(w.intrawg_overlap, 1) << at;
    EXPECT_EQ(w.warps, x.warps) << at;
    EXPECT_EQ(w.stages, 2u) << at;
    EXPECT_LE(w.smem_per_cta, h100.sm.shared_mem_per_block_optin_bytes) << at;
  }
  // Shared memory of d = 128: Q 128x128, 2 stages of K and V 176x128, fp16 (P in registers).
  EXPECT_EQ(make_program(fa3(128), h100).workload.smem_per_cta, (128 + 4 * 176) * 128 * 2u);
  // setmaxnreg budgets fit the register file: producer + consumers <= 64 K registers.
  for (std::uint32_t wg : {1u, 2u, 3u}) {
    const Flash3Registers r = flash3_registers(wg);
    EXPECT_LE(128u * (r.producer + wg * r.consumer), 65536u) << wg;
  }
}

std::string config_error(const core::Workload& w, const core::DeviceSpec& d) {
  try {
    make_program(w, d);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Flash3Validation, BadTilesDevicesAndKeysNameTheKey) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  core::Workload w = fa3(128);
  w.block_m = 96;
  EXPECT_NE(config_error(w, h100).find("block_m"), std::string::npos);
  w = fa3(128);
  w.block_n = 72;
  EXPECT_NE(config_error(w, h100).find("block_n"), std::string::npos);
  w = fa3(128);
  w.consumer_warpgroups = 3;
  w.block_m = 128;
  EXPECT_NE(config_error(w, h100).find("block_m"), std::string::npos);
  w = fa3(128);
  w.dtype = core::DType::kFp32;
  EXPECT_NE(config_error(w, h100).find("dtype"), std::string::npos);
  w = fa3(128);
  w.block_n = 256;  // Q 32 K + 2 x (K, V) 2 x 64 K = 288 KiB
  EXPECT_NE(config_error(w, h100).find("block_n"), std::string::npos);
  // An Ampere device has no TMA / wgmma: the error names the device and its compute capability.
  const std::string a100 = config_error(fa3(128), config::load_device("a100-40gb"));
  EXPECT_NE(a100.find("device.compute_capability"), std::string::npos) << a100;
  EXPECT_NE(a100.find("a100-40gb"), std::string::npos) << a100;
  // consumer_warpgroups alone sets block_m.
  w = fa3(128);
  w.consumer_warpgroups = 3;
  EXPECT_EQ(make_program(w, h100).workload.block_m, 192u);
}

TEST(Flash3Validation, CheckGridHasFlash3OnlyOnDevicesThatRunIt) {
  auto count = [](const std::vector<core::Workload>& g) {
    return std::count_if(g.begin(), g.end(), [](const core::Workload& w) { return w.kernel == "flash3"; });
  };
  const std::ptrdiff_t rows = 24 + 8;  // forward, and backward (flash3_bwd.cpp)
  EXPECT_EQ(count(check_grid(config::load_device("h100-sxm"))), rows);
  EXPECT_EQ(count(check_grid(config::load_device("a100-40gb"))), 0);
  EXPECT_EQ(count(check_grid()), rows);
  const std::vector<core::Workload> all = check_grid();  // less flash3 and the TMA rows (sm_90 too)
  const auto tma = std::count_if(all.begin(), all.end(), [](const core::Workload& w) { return w.tma == 1; });
  EXPECT_EQ(tma, 2);
  EXPECT_EQ(check_grid(config::load_device("a100-40gb")).size() + rows + tma, all.size());
}

std::string load_error(const std::vector<config::Override>& sets, const std::string& kernel = "flash3") {
  try {
    config::workload_for_kernel(kernel, sets);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Flash3Validation, LoaderRejectsBadKnobValuesAndKnobsOfOtherKernels) {
  EXPECT_EQ(load_error({{"consumer_warpgroups", "2"}, {"pingpong", "false"}, {"intrawg_overlap", "true"}}), "");
  EXPECT_NE(load_error({{"consumer_warpgroups", "4"}}).find("consumer_warpgroups"), std::string::npos);
  EXPECT_NE(load_error({{"consumer_warpgroups", "0"}}).find("consumer_warpgroups"), std::string::npos);
  EXPECT_NE(load_error({{"pingpong", "maybe"}}).find("pingpong"), std::string::npos);
  const std::string other = load_error({{"intrawg_overlap", "true"}}, "flash2");
  EXPECT_NE(other.find("intrawg_overlap"), std::string::npos) << other;
  EXPECT_NE(other.find("flash2"), std::string::npos) << other;
}

std::vector<core::Workload> small_grid() {
  std::vector<core::Workload> out;
  for (auto dtype : {core::DType::kFp16, core::DType::kFp8})
    for (bool causal : {false, true})
      for (std::uint64_t kvh : {2, 1})
        for (std::uint32_t wg : {1, 2, 3})
          for (std::int8_t pp : {0, 1}) {
            core::Workload w;
            w.kernel = "flash3";
            w.batch = 1;
            w.heads = 2;
            w.kv_heads = kvh;
            w.seq_q = causal ? 200 : 136;  // ragged against 64-row warp groups
            w.seq_kv = 200;                // ragged against 48-key blocks
            w.head_dim = 32;
            w.dtype = dtype;
            w.causal = causal;
            w.block_m = 64 * wg;
            w.block_n = 48;
            w.pingpong = pp;
            w.intrawg_overlap = static_cast<std::int8_t>(wg != 2);
            out.push_back(w);
          }
  return out;
}

TEST(Flash3Bytes, OpStreamAndL2OffEngineEqualTheClosedForm) {
  const core::DeviceSpec dev = config::load_device("h100-sxm", {{"l2.capacity_bytes", "0"}});
  int bad = 0;
  for (const core::Workload& w : small_grid()) {
    const core::TileProgram p = make_program(w, dev);
    const auto want = closed_form_traffic(p.workload);
    ASSERT_EQ(want.size(), 1u);
    const auto ops = core::TrafficCounter::count(p);
    const auto got = engine::simulate(dev, p);
    ASSERT_EQ(got.size(), 1u);
    for (std::size_t t = 0; t < core::kNumTensors; ++t) {
      const auto& e = want[0].traffic.by_tensor[t];
      if (ops[0].traffic.by_tensor[t] == e && got[0].tensors.dram.by_tensor[t] == e) continue;
      ++bad;
      ADD_FAILURE() << core::to_string(static_cast<core::Tensor>(t)) << " of " << p.workload.block_m << "x"
                    << p.workload.block_n << (w.causal ? " causal" : "") << " " << core::to_string(w.dtype)
                    << ": closed form read " << e.read << " write " << e.write << ", ops read "
                    << ops[0].traffic.by_tensor[t].read << ", engine read " << got[0].tensors.dram.by_tensor[t].read;
    }
  }
  EXPECT_EQ(bad, 0);
  // Causal skips the K/V blocks right of the diagonal; FP8 writes O in bf16 and reads K in 1 B.
  core::Workload w = fa3(128);
  w.seq_q = w.seq_kv = 1024;
  const auto full = closed_form_traffic(make_program(w, dev).workload)[0].traffic;
  w.causal = true;
  const auto causal = closed_form_traffic(make_program(w, dev).workload)[0].traffic;
  EXPECT_LT(causal[core::Tensor::kK].read, full[core::Tensor::kK].read * 6 / 10);
  w.causal = false;
  w.dtype = core::DType::kFp8;
  const auto fp8 = closed_form_traffic(make_program(w, dev).workload)[0].traffic;
  EXPECT_EQ(fp8[core::Tensor::kO].write, full[core::Tensor::kO].write);
  EXPECT_EQ(fp8[core::Tensor::kQ].read * 2, full[core::Tensor::kQ].read);
  EXPECT_EQ(fp8[core::Tensor::kLse].write, full[core::Tensor::kLse].write);
}

double time_ns(core::Workload w, const core::DeviceSpec& dev) {
  return engine::simulate(dev, make_program(w, dev))[0].totals.time_ns;
}

// The FA-3 paper's ablation (Table 2, d = 128, non-causal, seq 8k: 661 TFLOP/s with both, 582
// without the GEMM-softmax pipelining, 570 without warp specialization): the pipelining pays.
// Without the intra-warp-group overlap each consumer waits for P V before its next QK^T and
// the tensor pipe idles while the softmax runs. Ping-pong's named barriers are in the streams
// (the consumers issue their GEMMs in turn), but they change no time here: the engine's tensor
// pipe serves the groups' wgmmas in issue order, so the groups drift apart by themselves; on
// silicon concurrent wgmmas share the tensor cores and the groups run in lock step unless the
// barriers stagger them.
TEST(Flash3Schedule, IntraWarpGroupOverlapShortensTheRunAndPingpongOrdersTheGemms) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  core::Workload w = fa3(128);
  w.batch = 2;
  w.heads = 16;
  w.seq_q = w.seq_kv = 2048;
  const double both = time_ns(w, h100);
  core::Workload no_overlap = w;
  no_overlap.intrawg_overlap = 0;
  EXPECT_GT(time_ns(no_overlap, h100), 1.03 * both);
  core::Workload no_pingpong = w;
  no_pingpong.pingpong = 0;
  EXPECT_LE(time_ns(no_pingpong, h100), 1.01 * both);
  // The consumers' streams carry the turn-taking: one sync and one arrive per block after the
  // first, and the first group's opening arrive.
  auto named_ops = [&](const core::Workload& x) {
    const core::TileProgram p = make_program(x, h100);
    std::vector<core::TileOp> ops;
    std::size_t n = 0;
    for (std::uint32_t g = 1; g <= 2; ++g)
      for (std::uint64_t step = 0; ops.clear(), p.launches[0]->emit_group_step(0, g, step, ops); ++step)
        for (const auto& op : ops) n += op.kind == core::OpKind::kNamedSync || op.kind == core::OpKind::kNamedArrive;
    return n;
  };
  const std::uint64_t blocks = core::ceil_div(w.seq_kv, 176);
  EXPECT_EQ(named_ops(w), 2 * 2 * (blocks - 1) + 1 + 2);  // + the opening arrive, + 2 epilogue syncs
  EXPECT_EQ(named_ops(no_pingpong), 2u);
}

// Each warp group emits one step per K/V block (the producer its copies of the block, a consumer
// its GEMMs and softmax of it), so a CTA's ops in memory do not grow with the sequence: at N = 1M
// a whole stream per group held ~1.6 GiB of ops across the resident CTAs.
TEST(Flash3Schedule, EachWarpGroupEmitsOneStepPerKvBlock) {
  const core::DeviceSpec h200 = config::load_device("h200");
  auto steps = [&](std::uint64_t n, bool overlap, std::size_t& widest) {
    core::Workload w = fa3(128);
    w.seq_q = w.seq_kv = n;
    w.intrawg_overlap = overlap ? 1 : 0;
    const core::TileProgram p = make_program(w, h200);
    const auto& launch = *p.launches[0];
    std::vector<std::uint64_t> per_group;
    std::vector<core::TileOp> ops;
    for (std::uint32_t g = 0; g < launch.warp_groups().size(); ++g) {
      std::uint64_t k = 0;
      for (; ops.clear(), launch.emit_group_step(0, g, k, ops); ++k) widest = std::max(widest, ops.size());
      per_group.push_back(k);
    }
    return per_group;
  };
  for (const bool overlap : {true, false}) {
    std::size_t narrow = 0, wide = 0;
    const std::uint64_t blocks = core::ceil_div(std::uint64_t{2048}, 176);
    EXPECT_EQ(steps(2048, overlap, narrow), std::vector<std::uint64_t>(3, blocks)) << overlap;
    EXPECT_EQ(steps(65536, overlap, wide), std::vector<std::uint64_t>(3, core::ceil_div(std::uint64_t{65536}, 176)));
    EXPECT_EQ(wide, narrow) << overlap;  // the widest step does not grow with N
    EXPECT_LT(wide, 40u) << overlap;
  }
}

TEST(Flash3Functional, OwnScheduleMatchesAttentionInFp32AndReportsFp8) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  for (core::Workload w : small_grid()) {
    if (w.dtype != core::DType::kFp16) continue;
    w.seq_q = std::min<std::uint64_t>(w.seq_q, 136);
    const core::Workload r = make_program(w, h100).workload;
    EXPECT_LT(run_functional(r, Precision::kFp64), 1e-12);
    EXPECT_LT(run_functional(r, Precision::kFp32), 1e-5) << r.block_m << " pingpong " << int(r.pingpong);
  }
  // FP8 e4m3 storage (inputs and P in e4m3, O in bf16): the error is that of e4m3 rounding,
  // above fp16's and below e4m3's unit roundoff 2^-4 times a few.
  core::Workload w = fa3(128, false, core::DType::kFp8);
  w.heads = 1;
  w.seq_q = w.seq_kv = 512;
  const core::Workload r = make_program(w, h100).workload;
  const double fp8 = run_functional(r, Precision::kFp8E4M3), fp16 = run_functional(r, Precision::kFp16);
  EXPECT_GT(fp8, 4 * fp16);
  EXPECT_LT(fp8, 0.25);
  std::cout << "flash3 functional max relative error, d128 N512: fp8 " << fp8 << ", fp16 " << fp16 << "\n";
}

}  // namespace
}  // namespace attnsim::kernels
