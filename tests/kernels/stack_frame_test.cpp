// Register spills (workload key stack_frame_bytes): every CTA of the flash2 forward kernel writes
// its threads' stack frames to local memory once, and the engine gives each resident CTA slot its
// own copy, as the hardware maps local memory per thread slot. With the L2 off the frames are
// closed-form bytes; with an unbounded L2 one copy per slot used reaches HBM; on the h200 preset the
// 112-byte frame ptxas reports for FA-2's Flash_fwd_kernel_traits<128, 128, 64, 4> accounts for
// the DRAM writes Nsight Compute measured for the decode rows of kernels.csv.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/io_counts.h"
#include "sim/core/occupancy.h"
#include "sim/engine/engine.h"
#include "sim/io/ncu_csv_reader.h"
#include "tests/kernels/closed_form_check.h"

namespace attnsim::kernels {
namespace {

constexpr core::Tensor kLocal = core::Tensor::kLocal;

core::Workload flash2(std::uint32_t frame) {
  core::Workload w;
  w.kernel = "flash2";
  w.batch = 2;
  w.heads = 4;
  w.seq_q = 100;  // ragged: 4 row blocks of 32, the last one 4 rows
  w.seq_kv = 112;
  w.head_dim = 16;
  w.block_m = 32;
  w.block_n = 32;
  w.warps = 4;
  w.stack_frame_bytes = frame;
  return w;
}

core::DeviceSpec teaching(const std::string& l2_bytes) {
  return config::load_device("teaching", {{"l2.capacity_bytes", l2_bytes}});
}

core::TensorBytes local_dram(const std::vector<core::KernelResult>& r) { return r.at(0).tensors.dram[kLocal]; }

TEST(StackFrame, WithTheL2OffEveryCtaWritesItsFramesToHbm) {
  const core::DeviceSpec dev = teaching("0");
  for (bool causal : {false, true})
    for (auto pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
      core::Workload w = flash2(36);
      w.causal = causal;
      w.pass = pass;
      const auto got = testing::expect_closed_form_bytes(dev, w, causal ? "causal" : "not causal");
      // 2 x 4 heads x 4 row blocks, 128 threads x 36 B each; nothing read back.
      EXPECT_EQ(local_dram(got).write, 2u * 4 * 4 * 128 * 36);
      EXPECT_EQ(local_dram(got).read, 0u);
      // Only the forward kernel spills.
      for (std::size_t l = 1; l < got.size(); ++l) EXPECT_EQ(got[l].tensors.dram[kLocal], core::TensorBytes{});
    }
}

TEST(StackFrame, EachResidentCtaSlotHasItsOwnCopy) {
  // An 8 MiB L2 holds everything; the dirty lines are written back at the end of the launch.
  const core::DeviceSpec dev = teaching("8 MiB");
  const core::TileProgram p = make_program(flash2(36), dev);
  const core::LaunchShape shape = p.launches.at(0)->shape();
  const core::OccupancyResult occ = core::compute_occupancy(
      dev.sm, core::OccupancyInput{shape.threads_per_cta, shape.regs_per_thread, shape.smem_per_cta(), std::nullopt});
  const std::uint64_t slots = static_cast<std::uint64_t>(occ.active_blocks) * dev.sm.count;
  const std::uint64_t ctas = shape.num_ctas();
  ASSERT_LT(slots, ctas) << "the grid must have more CTAs than slots for the check to mean anything";
  // One copy per slot: neither one per CTA nor one shared by all.
  EXPECT_EQ(local_dram(engine::simulate(dev, p)).write, slots * 128 * 36);
  EXPECT_EQ(kernels::compulsory_traffic(p.workload).at(0).traffic[kLocal].write, 128u * 36);
}

TEST(StackFrame, NoFrameNoLocalTraffic) {
  const core::DeviceSpec dev = teaching("0");
  const core::TileProgram p = make_program(flash2(0), dev);
  const auto got = engine::simulate(dev, p);
  EXPECT_EQ(local_dram(got), core::TensorBytes{});
  EXPECT_EQ(got.at(0).tensors.lts[kLocal], core::TensorBytes{});
}

// kernels.csv's decode row B8 Hq32 Hkv32 N4096 d128 (flash_fwd_kernel, 256 CTAs of 128 threads in
// one wave): Nsight Compute counts 3.51 MB of DRAM writes for a 64 KiB output. Spilled frames of
// 112 B (ptxas for Flash_fwd_kernel_traits<128, 128, 64, 4>, flash-attention issue #1630) are
// 256 x 128 x 112 = 3.67 MB, written once and evicted by the K/V stream.
TEST(StackFrame, SpilledFramesAreTheDecodeRowsDramWritesOnH200) {
  const auto measured = io::NcuCsvReader::read_file(std::string(ATTNSIM_TEST_DATA) + "/reference/kernels.csv");
  const auto row = std::find_if(measured.kernels.begin(), measured.kernels.end(), [](const io::MeasuredKernel& k) {
    return k.workload.label == "decode_B8Hq32Hkv32N4096d128/sdpa_flash";
  });
  ASSERT_NE(row, measured.kernels.end());
  const double writes = row->metrics.at("dram__bytes_write.sum");

  core::DeviceSpec dev = config::load_device("h200", {{"l2.count_final_writeback", "false"}});
  core::Workload w;
  w.kernel = "flash2";
  w.batch = 8;
  w.heads = 32;
  w.seq_q = 1;
  w.seq_kv = 4096;
  w.head_dim = 128;
  w.block_m = 128;
  w.block_n = 64;
  w.warps = 4;
  w.stages = 2;
  w.regs_per_thread = 255;
  w.smem_per_cta = 65536;
  auto simulated_writes = [&](std::uint32_t frame) {
    w.stack_frame_bytes = frame;
    const auto r = engine::simulate(dev, make_program(w, dev));
    return static_cast<double>(r.at(0).tensors.dram.total_write());
  };
  EXPECT_NEAR(simulated_writes(112) / writes, 1.0, 0.10) << "measured " << writes;
  EXPECT_LT(simulated_writes(0) / writes, 0.10) << "without the frames the output stays in the L2";
}

}  // namespace
}  // namespace attnsim::kernels
