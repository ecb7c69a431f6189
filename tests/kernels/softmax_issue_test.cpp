// The standard kernel's forward softmax is bound by instruction issue: each value of a row costs
// the SASS instructions of PyTorch-shaped kernels compiled for sm_90
// (experiments/h200_validation/softmax_sass): 41 in the warp-per-row kernel (rows up to 4096 B),
// 68 in the block kernel holding the row in registers (up to 8192 values), 40 when the row is
// staged in shared memory (16-byte vector loads and stores there); the MUFU instructions among them
// (ex2, rcp) go to the SFU as kExp, the rest through the issue slots as kIssue. The backward softmax keeps its FP32 operation count.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

core::Workload standard(std::uint64_t seq, core::Pass pass = core::Pass::kFwd) {
  core::Workload w;
  w.kernel = "standard";
  w.heads = 2;
  w.seq_q = 256;
  w.seq_kv = seq;
  w.head_dim = 64;
  w.pass = pass;
  return w;
}

double time_ns(const core::KernelResult& r) { return r.totals.time_ns; }

// Thread instructions of kind `kind` the launch's CTA 0 issues.
std::uint64_t counted(const core::KernelLaunch& l, core::OpKind kind) {
  std::vector<core::TileOp> ops;
  std::uint64_t n = 0;
  for (std::uint64_t step = 0; l.emit_step(0, step, ops); ++step, ops.clear())
    for (const auto& op : ops)
      if (op.kind == kind) n += op.count;
  return n;
}
std::uint64_t issued(const core::KernelLaunch& l) { return counted(l, core::OpKind::kIssue); }

// The forward softmax launch of 8 heads of `seq` x `seq` scores on h200: its simulated time and
// DRAM bytes, and the time the schedulers need for `per_value` instructions per value (132 SMs x
// 4 x 32 thread instructions per cycle).
struct SoftmaxTime {
  double sim_ns, issue_ns, dram_bytes;
};
SoftmaxTime softmax_time_h200(std::uint64_t seq, double per_value) {
  const core::DeviceSpec dev = config::load_device("h200");
  core::Workload w = standard(seq);
  w.heads = 8;
  w.seq_q = seq;
  const auto r = engine::simulate(dev, make_program(w, dev)).at(1);
  const double values = 8.0 * static_cast<double>(seq) * static_cast<double>(seq);
  return {time_ns(r), values * per_value / (132.0 * 4 * 32) / dev.clock_ghz,
          static_cast<double>(r.tensors.dram.total_read() + r.tensors.dram.total_write())};
}

TEST(SoftmaxIssue, InstructionsPerValueFollowPyTorchsKernelChoice) {
  const core::DeviceSpec dev = config::load_device("h200");
  // per_value: all instructions a warp executes per value; mufu: of those, MUFU.EX2 (once per
  // expf, twice in the block kernels) and MUFU.RCP (the division), emitted as kExp, the rest as
  // kIssue; per_row: per row and thread of the row (32 threads per row in the warp kernel, 1024
  // in the block kernels).
  struct Case {
    std::uint64_t seq, rows_per_cta, per_value, mufu, per_row, row_threads;
  };
  for (const Case c : {Case{1024, 4, 36, 2, 32, 32}, Case{2048, 4, 36, 2, 32, 32}, Case{4096, 1, 62, 3, 32, 1024},
                       Case{8192, 1, 62, 3, 32, 1024}, Case{16384, 1, 37, 3, 64, 1024}}) {
    const core::TileProgram p = make_program(standard(c.seq), dev);
    ASSERT_EQ(p.launches.at(1)->name(), "standard_softmax");
    EXPECT_EQ(issued(*p.launches[1]), c.rows_per_cta * (c.seq * (c.per_value - c.mufu) + c.per_row * c.row_threads))
        << "seq_kv " << c.seq;
    EXPECT_EQ(counted(*p.launches[1], core::OpKind::kExp), c.rows_per_cta * c.seq * c.mufu) << "seq_kv " << c.seq;
    EXPECT_EQ(issued(*p.launches[0]), 0u);  // the GEMMs are not issue-bound in the model
  }
}

// One warp's loads of its row go out in dependent round trips (the compiled code converts the
// first values, waiting on their scoreboards, before it issues the rest: chain.py in
// experiments/h200_validation/softmax_sass), the CTA's warps side by side: a tile of the CTA's 4
// rows per round trip, split at 128-byte lines, the row's bytes loaded exactly once; the block
// kernel issues all its loads at once (1 round trip).
TEST(SoftmaxIssue, WarpKernelLoadsItsRowsInDependentRoundTrips) {
  const core::DeviceSpec dev = config::load_device("h200");
  for (const auto& [seq, trips, rows] : {std::tuple{1024u, 5u, 4u}, std::tuple{2048u, 10u, 4u}, std::tuple{4096u, 1u, 1u}}) {
    const core::TileProgram p = make_program(standard(seq), dev);
    std::vector<core::TileOp> ops;
    ASSERT_TRUE(p.launches.at(1)->emit_step(0, 0, ops));
    std::uint32_t loads = 0;
    core::Bytes bytes = 0;
    for (const auto& op : ops) {
      if (op.kind == core::OpKind::kExp || op.kind == core::OpKind::kIssue) break;  // all loads come first
      ASSERT_EQ(op.kind, core::OpKind::kLoad);
      EXPECT_EQ(op.rows, rows) << "seq_kv " << seq;
      EXPECT_EQ(op.addr % 128, 0u) << "seq_kv " << seq;
      ++loads;
      bytes += op.bytes();
    }
    EXPECT_EQ(loads, trips) << "seq_kv " << seq;
    EXPECT_EQ(bytes, rows * seq * 2) << "seq_kv " << seq;
  }
}

// The compute is issued in slices (the schedulers interleave resident warps instruction by
// instruction), one per 128 cycles of one warp's chain (at most 64), each kIssue at least its
// share of the chain: 9392 cycles at 64 values per lane (N = 2048), 4752 at 32 (N = 1024),
// chain.py's readings.
TEST(SoftmaxIssue, ComputeIsSlicedAndCarriesTheWarpsChain) {
  const core::DeviceSpec dev = config::load_device("h200");
  for (const auto& [seq, chain, n] : {std::tuple{1024u, 4752.0, 38u}, std::tuple{2048u, 9392.0, 64u}}) {
    const core::TileProgram p = make_program(standard(seq), dev);
    std::vector<core::TileOp> ops;
    ASSERT_TRUE(p.launches.at(1)->emit_step(0, 0, ops));
    std::uint32_t slices = 0;
    double floor = 0;
    for (const auto& op : ops)
      if (op.kind == core::OpKind::kIssue) {
        ++slices;
        floor += op.m;
      }
    EXPECT_EQ(slices, n) << "seq_kv " << seq;
    EXPECT_NEAR(floor, chain, 64.0) << "seq_kv " << seq;
  }
}

// The chain makes the warp kernel slower where few warps share a scheduler: at N = 2048 (80
// registers, 6 CTAs of 4 warps per SM) the kernel takes longer than its issue bound; without the
// chains and round trips it was within 5 % of it.
TEST(SoftmaxIssue, FewWarpsPerSchedulerCannotHideTheChain) {
  const SoftmaxTime t = softmax_time_h200(2048, 36);
  EXPECT_GT(t.sim_ns, 1.4 * t.issue_ns);
}

TEST(SoftmaxIssue, BackwardSoftmaxIsNotIssueModelled) {
  const core::DeviceSpec dev = config::load_device("h200");
  const core::TileProgram p = make_program(standard(1024, core::Pass::kFwdBwd), dev);
  bool found = false;
  for (const auto& l : p.launches)
    if (l->name() == "standard_bwd_softmax") {
      found = true;
      EXPECT_EQ(issued(*l), 0u);
    }
  EXPECT_TRUE(found);
}

TEST(SoftmaxIssue, ScratchpadDevicesCountFp32OperationsInstead) {
  const core::DeviceSpec dev = config::load_device("scratchpad-accel");
  const core::TileProgram p = make_program(standard(1024), dev);
  EXPECT_EQ(issued(*p.launches.at(1)), 0u);
  std::vector<core::TileOp> ops;
  ASSERT_TRUE(p.launches[1]->emit_step(0, 0, ops));
  EXPECT_TRUE(std::any_of(ops.begin(), ops.end(), [](const core::TileOp& op) {
    return op.kind == core::OpKind::kElementwise && op.count == 3 * 1024;
  }));
}

// On h200 the issue rate, not HBM, sets the softmax's time at N = 4096: about the time the
// schedulers need for 68 instructions per value (132 SMs x 4 x 32 per cycle), with the HBM well
// below its peak.
TEST(SoftmaxIssue, IssueBoundOnH200) {
  const SoftmaxTime t = softmax_time_h200(4096, 68);
  EXPECT_GT(t.sim_ns, t.issue_ns);
  EXPECT_LT(t.sim_ns, 1.3 * t.issue_ns);
  EXPECT_LT(t.dram_bytes / t.sim_ns, 0.6 * config::load_device("h200").hbm.bandwidth_gbps);  // GB/s
}

}  // namespace
}  // namespace attnsim::kernels
