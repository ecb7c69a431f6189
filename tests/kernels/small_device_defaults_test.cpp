// Kernel defaults on a device smaller than the libraries' tiles assume (the teaching preset: 64 KiB
// of shared memory and 32768 registers per block): every kernel runs with its defaults, its tiles
// halved to fit (as FA-2's backward does) and cuBLAS's 12-warp GEMM cut to one warp group, while
// tiles the user sets are never changed (they are refused where they do not fit), and the presets
// of real GPUs keep the libraries' own tiles.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"
#include "sim/core/io_counts.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

core::Workload workload(const std::string& kernel, std::vector<config::Override> keys) {
  return config::workload_for_kernel(kernel, keys);
}

TEST(SmallDeviceDefaults, EveryKernelRunsOnTheTeachingPresetWithItsDefaults) {
  const core::DeviceSpec dev = config::load_device("teaching");
  const core::DeviceSpec off = config::load_device("teaching", {{"l2.capacity_bytes", "0"}});
  const std::vector<std::pair<std::string, std::vector<config::Override>>> cases = {
      {"standard", {{"seq", "256"}}},
      {"standard", {{"seq", "256"}, {"head_dim", "128"}, {"pass", "fwdbwd"}, {"causal", "true"}}},
      {"standard", {{"seq", "256"}, {"qkv_packed", "true"}}},
      {"flash2", {{"seq", "256"}, {"head_dim", "256"}}},
      {"flash2", {{"seq", "256"}, {"head_dim", "256"}, {"pass", "fwdbwd"}}},
      {"flash2", {{"seq", "256"}, {"head_dim", "256"}, {"impl", "triton"}}},
      {"flash_decode", {{"seq_q", "1"}, {"seq_kv", "1024"}, {"head_dim", "64"}}},
      {"flash_decode", {{"seq_q", "1"}, {"seq_kv", "1024"}, {"head_dim", "128"}}},
  };
  for (const auto& [kernel, keys] : cases) {
    const core::Workload w = workload(kernel, keys);
    core::TileProgram p;
    ASSERT_NO_THROW(p = make_program(w, dev)) << kernel;
    EXPECT_LE(p.workload.smem_per_cta, dev.sm.shared_mem_per_block_optin_bytes) << kernel;
    const auto results = engine::simulate(dev, p);
    ASSERT_FALSE(results.empty()) << kernel;
    // The halved tiles are what the closed forms count: exact with the L2 off.
    const core::TileProgram q = make_program(w, off);
    const auto got = engine::simulate(off, q);
    const auto want = closed_form_traffic(q.workload);
    ASSERT_EQ(got.size(), want.size()) << kernel;
    for (std::size_t l = 0; l < got.size(); ++l)
      for (std::size_t t = 0; t < core::kNumTensors; ++t)
        EXPECT_TRUE(got[l].tensors.dram.by_tensor[t] == want[l].traffic.by_tensor[t])
            << kernel << " " << want[l].kernel_name << " " << core::to_string(static_cast<core::Tensor>(t));
  }
  // What they resolved to: cuBLAS's 256 x 128 GEMM tile halved once, one warp group; FA-2's
  // d = 256 forward tile 64 x 64 halved to 64 x 32; FA-2's split kernel's 256 keys at d = 64
  // halved to 128.
  const core::Workload gemm = make_program(workload("standard", {{"seq", "256"}}), dev).workload;
  EXPECT_EQ(gemm.block_m, 128u);
  EXPECT_EQ(gemm.block_n, 128u);
  EXPECT_EQ(gemm.warps, 4u);
  const core::Workload fa2 = make_program(workload("flash2", {{"seq", "256"}, {"head_dim", "256"}}), dev).workload;
  EXPECT_EQ(fa2.block_m, 64u);
  EXPECT_EQ(fa2.block_n, 32u);
  const core::Workload dec =
      make_program(workload("flash_decode", {{"seq_q", "1"}, {"seq_kv", "1024"}, {"head_dim", "64"}}), dev).workload;
  EXPECT_EQ(dec.block_n, 128u);
}

TEST(SmallDeviceDefaults, TilesTheUserSetAreRefusedNotShrunk) {
  const core::DeviceSpec dev = config::load_device("teaching");
  EXPECT_THROW(make_program(workload("standard", {{"seq", "256"}, {"block_m", "256"}, {"block_n", "128"}}), dev),
               core::ConfigError);
  EXPECT_THROW(make_program(workload("flash2", {{"seq", "256"}, {"head_dim", "256"}, {"block_n", "64"}, {"block_m", "64"}}), dev),
               core::ConfigError);
  EXPECT_THROW(make_program(workload("flash_decode", {{"seq_q", "1"}, {"seq_kv", "1024"}, {"head_dim", "64"}, {"block_n", "256"}}), dev),
               core::ConfigError);
  // One side set: only the other is halved.
  const core::Workload w =
      make_program(workload("flash2", {{"seq", "256"}, {"head_dim", "256"}, {"block_m", "64"}}), dev).workload;
  EXPECT_EQ(w.block_m, 64u);
  EXPECT_EQ(w.block_n, 32u);
}

TEST(SmallDeviceDefaults, RealPresetsKeepTheLibrariesTiles) {
  for (const char* name : {"h200", "a100-40gb"}) {
    const core::DeviceSpec dev = config::load_device(name);
    const core::Workload gemm = make_program(workload("standard", {{"seq", "256"}}), dev).workload;
    EXPECT_EQ(gemm.block_m, 256u) << name;
    EXPECT_EQ(gemm.block_n, 128u) << name;
    EXPECT_EQ(gemm.warps, 12u) << name;
    const core::Workload dec =
        make_program(workload("flash_decode", {{"seq_q", "1"}, {"seq_kv", "1024"}, {"head_dim", "64"}}), dev).workload;
    EXPECT_EQ(dec.block_n, 256u) << name;
  }
}

}  // namespace
}  // namespace attnsim::kernels
