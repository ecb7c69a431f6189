// standard's `pytorch` key: the eager row softmax of releases before 2.4 (the three-pass block
// kernels for rows of more than 1024 values) and of 2.4 to 2.6 (the 48 KiB shared-memory kernel),
// launch shapes and re-reads, their closed-form bytes, and the loader's rules for the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"
#include "tests/kernels/closed_form_check.h"

namespace attnsim::kernels {
namespace {

core::Workload standard(std::uint64_t seq, const std::string& pytorch) {
  core::Workload w;
  w.kernel = "standard";
  w.batch = 1;
  w.heads = 2;
  w.kv_heads = 2;
  w.seq_q = w.seq_kv = seq;
  w.head_dim = 64;
  w.pytorch = pytorch;
  return w;
}

const core::KernelLaunch& softmax(const core::TileProgram& p) {
  for (const auto& l : p.launches)
    if (l->name() == "standard_softmax") return *l;
  throw std::runtime_error("no standard_softmax launch");
}

// fwd+bwd at `seq` with the L2 off under `release` and under 2.11: both exactly their closed
// forms; the extra DRAM reads of S by standard_softmax and of dP by standard_bwd_softmax are
// `s_matrices` and `dp_matrices` H·N²·v matrices, and no other launch reads more.
void expect_extra_reads(std::uint64_t seq, const std::string& release, std::uint64_t s_matrices,
                        std::uint64_t dp_matrices) {
  const core::DeviceSpec dev = config::load_device("h100-sxm", {{"l2.capacity_bytes", "0"}});
  core::Workload old = standard(seq, release), now = standard(seq, "2.11");
  old.pass = now.pass = core::Pass::kFwdBwd;
  const auto a = testing::expect_closed_form_bytes(dev, old, release);
  const auto b = testing::expect_closed_form_bytes(dev, now, "2.11");
  ASSERT_EQ(a.size(), b.size());
  const core::Bytes matrix = 2ull * seq * seq * 2;  // H·N²·v
  const auto s = static_cast<std::size_t>(core::Tensor::kS), dp = static_cast<std::size_t>(core::Tensor::kDP);
  for (std::size_t l = 0; l < a.size(); ++l) {
    EXPECT_EQ(a[l].tensors.dram.by_tensor[s].read - b[l].tensors.dram.by_tensor[s].read,
              a[l].name == "standard_softmax" ? s_matrices * matrix : 0)
        << release << " " << a[l].name;
    EXPECT_EQ(a[l].tensors.dram.by_tensor[dp].read - b[l].tensors.dram.by_tensor[dp].read,
              a[l].name == "standard_bwd_softmax" ? dp_matrices * matrix : 0)
        << release << " " << a[l].name;
  }
}

// SoftMax_getBlockSize(ILP = 8 halves, cols): cols / 8 threads halved, rounded up to a power of
// two, at most 512; one row per CTA. Rows of up to 1024 values keep the one-warp-per-row kernel
// (4 rows per 128-thread CTA), and 2.11 keeps its own dispatch.
TEST(PytorchRelease, BlockSizeOfTheThreePassKernel) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  for (auto [seq, threads] : {std::pair<std::uint64_t, std::uint32_t>{2048, 128}, {4096, 256}, {8192, 512}, {16384, 512},
                              {1100, 128}}) {
    const core::LaunchShape s = softmax(make_program(standard(seq, "2.3"), h100)).shape();
    EXPECT_EQ(s.threads_per_cta, threads) << seq;
    EXPECT_EQ(s.grid_x, seq) << seq;  // one row per CTA
    EXPECT_EQ(s.smem_dynamic_bytes, threads * 4) << seq;  // blockReduce's floats
  }
  const core::LaunchShape warp = softmax(make_program(standard(1024, "2.3"), h100)).shape();
  EXPECT_EQ(warp.threads_per_cta, 128u);
  EXPECT_EQ(warp.grid_x, 256u);  // 4 rows per CTA
  const core::LaunchShape now = softmax(make_program(standard(4096, "2.11"), h100)).shape();
  EXPECT_EQ(now.threads_per_cta, 1024u);  // cunn_SoftMaxForwardReg
}

// Passes 2 and 3 read the row again, one 16-byte vector of every thread after the other: at
// 4096 values (256 threads, 16 values each) the CTA loads the row once whole and twice in halves.
TEST(PytorchRelease, ThreePassKernelReadsItsRowThreeTimes) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  std::vector<core::TileOp> ops;
  ASSERT_TRUE(softmax(make_program(standard(4096, "2.3"), h100)).emit_step(0, 0, ops));
  std::vector<std::uint32_t> loads;
  for (const auto& op : ops)
    if (op.kind == core::OpKind::kLoad) loads.push_back(op.row_bytes);
  EXPECT_EQ(loads, (std::vector<std::uint32_t>{8192, 4096, 4096, 4096, 4096}));
  ops.clear();
  ASSERT_TRUE(softmax(make_program(standard(4096, "2.11"), h100)).emit_step(0, 0, ops));
  core::Bytes read = 0;
  for (const auto& op : ops)
    if (op.kind == core::OpKind::kLoad) read += op.bytes();
  EXPECT_EQ(read, 8192u);
}

// With the L2 off the engine's bytes are the closed form's, which counts S read three times by
// the forward and the gradient twice by the backward's softmax.
TEST(PytorchRelease, ClosedFormBytesExactWithTheL2Off) { expect_extra_reads(1100, "2.3", 2, 1); }

// 2.4 to 2.6: rows that fit 48 KiB run cunn_SoftMaxForwardSmem with up to 1024 threads and all of
// sharedMemPerBlock, reading the row once; the backward still reads its gradient twice; a row that
// does not fit (or is not a multiple of the 16-byte vector) runs the three-pass kernel with 1024 threads.
TEST(PytorchRelease, SharedMemoryKernelOf24To26) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  for (auto [seq, threads] : {std::pair<std::uint64_t, std::uint32_t>{1104, 1024}, {2048, 1024}, {16384, 1024}}) {
    const core::LaunchShape s = softmax(make_program(standard(seq, "2.5"), h100)).shape();
    EXPECT_EQ(s.threads_per_cta, threads) << seq;
    EXPECT_EQ(s.smem_dynamic_bytes, 49152u) << seq;
    EXPECT_EQ(s.grid_x, seq) << seq;
  }
  // The backward's cunn_SoftMaxBackward keeps SoftMax_getBlockSize's threads (128 at 2048 values).
  core::Workload both = standard(2048, "2.5");
  both.pass = core::Pass::kFwdBwd;
  const core::TileProgram p = make_program(both, h100);
  for (const auto& l : p.launches)
    if (l->name() == "standard_bwd_softmax") {
      EXPECT_EQ(l->shape().threads_per_cta, 128u);
    }
  EXPECT_FALSE(core::softmax_three_pass(standard(2048, "2.5"), 2048, 2));
  EXPECT_TRUE(core::softmax_backward_rereads(standard(2048, "2.5"), 2048, 2));
  EXPECT_FALSE(core::softmax_backward_rereads(standard(2048, "2.7"), 2048, 2));
  // 1100 values are not whole 16-byte vectors; 30000 fp16 values do not fit 48 KiB.
  for (std::uint64_t seq : {1100, 30000}) {
    EXPECT_TRUE(core::softmax_three_pass(standard(seq, "2.5"), seq, 2)) << seq;
    EXPECT_EQ(softmax(make_program(standard(seq, "2.5"), h100)).shape().threads_per_cta, 1024u) << seq;
  }
  expect_extra_reads(1104, "2.5", 0, 1);
}

// A release string is MAJOR.MINOR[.PATCH]; releases before 1.2 are not modelled; only standard
// reads the key.
TEST(PytorchRelease, LoaderRules) {
  EXPECT_EQ(config::workload_for_kernel("standard", {{"pytorch", "2.3"}}).pytorch, "2.3");
  EXPECT_EQ(config::workload_for_kernel("standard", {{"pytorch", "2.3.1"}}).pytorch, "2.3.1");
  EXPECT_EQ(config::workload_for_kernel("standard", {}).pytorch, "2.11");
  EXPECT_TRUE(core::softmax_three_pass(standard(2048, "2.3.1"), 2048, 2));
  EXPECT_FALSE(core::softmax_three_pass(standard(2048, "2.10"), 2048, 2));
  EXPECT_FALSE(core::softmax_three_pass(standard(1024, "2.3"), 1024, 2));
  EXPECT_TRUE(core::softmax_three_pass(standard(1025, "1.12"), 1025, 4));
  EXPECT_EQ(config::workload_for_kernel("standard", {{"pytorch", "2.5"}}).pytorch, "2.5");
  for (const char* bad : {"1.1", "0.4", "abc", "2", "2.3.", "2..3"}) {
    try {
      config::workload_for_kernel("standard", {{"pytorch", bad}});
      ADD_FAILURE() << bad << " accepted";
    } catch (const core::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("pytorch"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(config::workload_for_kernel("flash2", {{"pytorch", "2.3"}}), core::ConfigError);
  EXPECT_NO_THROW(config::workload_for_kernel("flash2", {{"pytorch", "2.11"}}));
}

}  // namespace
}  // namespace attnsim::kernels
