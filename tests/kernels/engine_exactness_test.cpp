// The engine running the kernels' op streams: with the L2 off, HBM bytes per tensor per launch
// equal core's closed forms exactly; with an 8 MiB L2 (larger than every working set here), they equal the
// compulsory bytes (each distinct byte read once and written once per launch).
#include <gtest/gtest.h>

#include <sstream>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/io_counts.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

core::DeviceSpec device(const std::string& l2_bytes) {
  return config::load_device("teaching", {{"l2.capacity_bytes", l2_bytes}});
}

std::vector<core::Workload> grid() {
  std::vector<core::Workload> out;
  for (const char* kernel : {"standard", "flash1", "flash2", "flash_decode"})
    for (bool causal : {false, true})
      for (std::uint64_t kvh : {2, 1})
        for (auto pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
          const std::string k = kernel;
          if (pass == core::Pass::kFwdBwd && k == "flash_decode") continue;
          core::Workload w;
          w.kernel = k;
          w.batch = 1;
          w.heads = 2;
          w.kv_heads = kvh;
          w.seq_q = k == "flash_decode" ? 4 : 64;  // whole 32-byte sectors of LSE_partial
          w.seq_kv = k == "flash_decode" ? 256 : 128;
          w.head_dim = 16;
          w.causal = causal;
          w.pass = pass;
          w.block_m = 32;
          w.block_n = 32;
          w.block_k = 16;
          w.num_splits = k == "flash_decode" ? 3 : 0;
          w.warps = 4;  // the teaching device has 32 K registers per block
          out.push_back(w);
          if (k == "standard") {  // GEMMs in 2-CTA clusters: the shared operand tile once per pair
            w.gemm_cluster = 2;
            out.push_back(w);
            w.seq_q = 100;  // ragged: a lone last row block (4 rows); 144 keys: whole sectors, causal offset
            w.seq_kv = 144;
            out.push_back(w);
          }
        }
  return out;
}

int compare_dram(const std::vector<core::KernelResult>& got, const std::vector<core::LaunchTraffic>& want,
                 const core::Workload& w) {
  EXPECT_EQ(got.size(), want.size()) << w.kernel;
  int bad = 0;
  for (std::size_t l = 0; l < std::min(got.size(), want.size()); ++l)
    for (std::size_t t = 0; t < core::kNumTensors; ++t) {
      const auto& g = got[l].tensors.dram.by_tensor[t];
      const auto& e = want[l].traffic.by_tensor[t];
      if (g == e) continue;
      ++bad;
      ADD_FAILURE() << w.kernel << (w.causal ? " causal" : "") << " kv_heads " << w.kv_heads << " "
                    << core::to_string(w.pass) << ": " << want[l].kernel_name << " "
                    << core::to_string(static_cast<core::Tensor>(t)) << " dram read " << g.read << " vs " << e.read
                    << ", write " << g.write << " vs " << e.write;
    }
  return bad;
}

TEST(EngineExactness, L2OffHbmBytesEqualClosedForms) {
  const core::DeviceSpec dev = device("0");
  int bad = 0;
  for (const auto& w : grid()) {
    const core::TileProgram p = make_program(w, dev);
    bad += compare_dram(engine::simulate(dev, p), kernels::closed_form_traffic(p.workload), p.workload);
  }
  EXPECT_EQ(bad, 0);
}

// Ragged blocks (block_m 32 over seq_q, 100 = 2·48 + 4 keys; seq_q < seq_kv 100 gives the causal
// offset) for the kernels whose loops walk blocks of both dimensions, both passes.
std::vector<core::Workload> ragged_grid(std::initializer_list<std::uint64_t> seq_qs) {
  std::vector<core::Workload> out;
  for (const char* kernel : {"flash1", "flash2"})
    for (std::uint64_t nq : seq_qs)
      for (bool causal : {false, true})
        for (auto pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
          core::Workload w;
          w.kernel = kernel;
          w.batch = 1;
          w.heads = 2;
          w.kv_heads = 1;
          w.seq_q = nq;
          w.seq_kv = 100;
          w.head_dim = 16;
          w.causal = causal;
          w.pass = pass;
          w.block_m = 32;
          w.block_n = 48;
          w.warps = 4;
          out.push_back(w);
        }
  return out;
}

TEST(EngineExactness, L2OffHbmBytesEqualClosedFormsWithRaggedBlocks) {
  const core::DeviceSpec dev = device("0");
  int bad = 0;
  for (const auto& w : ragged_grid({100, 37})) {
    const core::TileProgram p = make_program(w, dev);
    bad += compare_dram(engine::simulate(dev, p), kernels::closed_form_traffic(p.workload), p.workload);
  }
  EXPECT_EQ(bad, 0);
}

// The L2 moves whole 32-byte sectors: seq_q = 88 and 40 (ragged against block_m 32) keep each
// head's fp32 statistics (m, ℓ, LSE, Delta) a whole number of sectors; with seq_q = 37 the
// distinct-byte count and the sectors fetched differ (148 B per head).
TEST(EngineExactness, UnboundedL2HbmBytesEqualCompulsoryWithRaggedBlocks) {
  const core::DeviceSpec dev = device("8 MiB");
  int bad = 0;
  for (const auto& w : ragged_grid({88, 40})) {
    const core::TileProgram p = make_program(w, dev);
    bad += compare_dram(engine::simulate(dev, p), kernels::compulsory_traffic(p.workload), p.workload);
  }
  EXPECT_EQ(bad, 0);
}

TEST(EngineExactness, UnboundedL2HbmBytesEqualCompulsory) {
  const core::DeviceSpec dev = device("8 MiB");
  int bad = 0;
  for (const auto& w : grid()) {
    const core::TileProgram p = make_program(w, dev);
    bad += compare_dram(engine::simulate(dev, p), kernels::compulsory_traffic(p.workload), p.workload);
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace attnsim::kernels
