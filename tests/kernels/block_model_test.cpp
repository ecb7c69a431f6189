// The block model (l2.tracking_bytes above the line size): what it keeps exact and how far it
// strays from the line-level model. Exact by construction: with the L2 off it is not used (HBM
// bytes equal the closed forms); with an L2 larger than every working set, HBM bytes equal the
// compulsory bytes (sector masks stay 32-B exact inside a block). Approximate: time and bytes
// against the line model on small workloads of every kernel, within the bounds docs/performance.md
// states for the reference workloads.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/io_counts.h"
#include "sim/engine/engine.h"
#include "sim/io/launch_metrics.h"

namespace attnsim::kernels {
namespace {

core::DeviceSpec teaching(const std::string& l2_bytes, const std::string& tracking) {
  return config::load_device("teaching", {{"l2.capacity_bytes", l2_bytes}, {"l2.tracking_bytes", tracking}});
}

// `aligned`: 128-B rows and whole blocks (the reference workloads' kind); otherwise 48-B rows
// and ragged blocks, where requests straddle lines and blocks.
std::vector<core::Workload> grid(bool aligned = false) {
  std::vector<core::Workload> out;
  for (const char* kernel : {"standard", "flash1", "flash2", "flash_decode"})
    for (bool causal : {false, true})
      for (auto pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
        const std::string k = kernel;
        if (pass == core::Pass::kFwdBwd && (k == "flash_decode" || k == "flash1")) continue;
        core::Workload w;
        w.kernel = k;
        w.batch = 1;
        w.heads = 2;
        w.kv_heads = 1;
        w.seq_q = k == "flash_decode" ? 4 : (aligned ? 128 : 96);
        w.seq_kv = k == "flash_decode" ? 256 : (aligned ? 256 : 160);
        w.head_dim = aligned ? 64 : 24;
        w.causal = causal;
        w.pass = pass;
        w.block_m = 32;
        w.block_n = 32;
        w.block_k = 16;
        w.num_splits = k == "flash_decode" ? 3 : 0;
        w.warps = 4;
        out.push_back(w);
      }
  return out;
}

int compare(const std::vector<core::KernelResult>& got, const std::vector<core::LaunchTraffic>& want,
            const core::Workload& w, const std::string& what) {
  EXPECT_EQ(got.size(), want.size());
  int bad = 0;
  for (std::size_t l = 0; l < std::min(got.size(), want.size()); ++l)
    for (std::size_t t = 0; t < core::kNumTensors; ++t)
      if (!(got[l].tensors.dram.by_tensor[t] == want[l].traffic.by_tensor[t])) {
        ++bad;
        ADD_FAILURE() << what << ": " << w.kernel << (w.causal ? " causal " : " ") << core::to_string(w.pass) << " "
                      << want[l].kernel_name << " " << core::to_string(static_cast<core::Tensor>(t));
      }
  return bad;
}

TEST(BlockModel, L2OffHbmBytesEqualClosedForms) {
  const core::DeviceSpec dev = teaching("0", "1024");
  int bad = 0;
  for (const auto& w : grid()) {
    const core::TileProgram p = make_program(w, dev);
    bad += compare(engine::simulate(dev, p), kernels::closed_form_traffic(p.workload), p.workload, "L2 off");
  }
  EXPECT_EQ(bad, 0);
}

// Also on h200, whose L1 caches global loads: the L1 keeps sector masks per unit too, so a unit
// partly in the L1 does not hide the rest of it from the L2 and DRAM.
TEST(BlockModel, UnboundedL2HbmBytesEqualCompulsory) {
  for (const char* tracking : {"256", "1024", "2048"}) {
    for (const core::DeviceSpec& dev :
         {teaching("8 MiB", tracking), config::load_device("h200", {{"l2.tracking_bytes", tracking}})}) {
      int bad = 0;
      for (const auto& w : grid()) {
        const core::TileProgram p = make_program(w, dev);
        bad += compare(engine::simulate(dev, p), kernels::compulsory_traffic(p.workload), p.workload,
                       dev.name + " tracking " + tracking);
      }
      EXPECT_EQ(bad, 0) << dev.name << " " << tracking;
    }
  }
}

double metric(const core::KernelResult& r, const char* name) {
  return core::find_metric(io::launch_metrics(r.totals), name)->value;
}

struct Diff {
  double time = 0, dram = 0, lts = 0;  // block / line - 1, summed over the program's launches
};

Diff line_vs_block(const core::Workload& w, const core::DeviceSpec& line, const core::DeviceSpec& block) {
  const auto a = engine::simulate(line, make_program(w, line));
  const auto b = engine::simulate(block, make_program(w, block));
  EXPECT_EQ(a.size(), b.size());
  double ta = 0, tb = 0, da = 0, db = 0, la = 0, lb = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    ta += metric(a[i], "gpu__time_duration.sum");
    tb += metric(b[i], "gpu__time_duration.sum");
    da += metric(a[i], "dram__bytes_read.sum") + metric(a[i], "dram__bytes_write.sum");
    db += metric(b[i], "dram__bytes_read.sum") + metric(b[i], "dram__bytes_write.sum");
    la += metric(a[i], "lts__t_bytes.sum");
    lb += metric(b[i], "lts__t_bytes.sum");
  }
  return {tb / ta - 1, db / da - 1, lb / la - 1};
}

core::Workload attention(const char* kernel, std::uint64_t batch, std::uint64_t heads, std::uint64_t seq_q,
                         std::uint64_t seq_kv, std::uint64_t d) {
  core::Workload w;
  w.kernel = kernel;
  w.batch = batch;
  w.heads = heads;
  w.kv_heads = heads;
  w.seq_q = seq_q;
  w.seq_kv = seq_kv;
  w.head_dim = d;
  return w;
}

// The block model (2 KiB) against the line model on the presets' own L2, on the quick rows of
// scripts/block_model_error.py: the bounds docs/performance.md states for the reference
// workloads (time 3.5 %, DRAM bytes 1.5 %, L2 bytes 0.5 %).
TEST(BlockModel, StaysCloseToTheLineModelOnPresets) {
  std::vector<std::pair<std::string, core::Workload>> cases;
  core::Workload w = attention("flash2", 1, 4, 2048, 2048, 128);
  w.causal = true;
  cases.push_back({"h200", w});
  w = attention("flash2", 2, 8, 1024, 1024, 64);
  w.pass = core::Pass::kFwdBwd;
  cases.push_back({"h200", w});
  cases.push_back({"h200", attention("standard", 1, 8, 1024, 1024, 80)});
  cases.push_back({"h200", attention("flash_decode", 2, 8, 1, 8192, 128)});
  cases.push_back({"a100-40gb", attention("flash2", 4, 16, 1024, 1024, 64)});
  for (const auto& [device, wl] : cases) {
    const auto d = line_vs_block(wl, config::load_device(device), config::load_device(device, {{"l2.tracking_bytes", "2048"}}));
    const std::string what = device + " " + wl.kernel + " " + std::string(core::to_string(wl.pass));
    EXPECT_LT(std::abs(d.time), 0.035) << what << ": time " << 100 * d.time << " %";
    EXPECT_LT(std::abs(d.dram), 0.015) << what << ": DRAM " << 100 * d.dram << " %";
    EXPECT_LT(std::abs(d.lts), 0.005) << what << ": L2 bytes " << 100 * d.lts << " %";
  }
}

// A credit-limited stream in the block model issues each 2-KiB unit whole (one L2 access, one
// credit chunk) or waits, overdrawing or idling the CTA allowance so that its bytes in flight
// average the allowance (tile_access.cpp, load_as), and a unit's DRAM requests leave as its lines
// pass the LSU, as the line model's do: streams on h200 keep the line model's time (measured
// +1.3 % for one CTA, +0.6 / +0.7 / +2.7 % for 33 x 4 KiB, 132 x 4 KiB, 264 x 16 KiB steps) with
// about one L2 access per unit (1.12 with 16-KiB steps, whose last unit is split as in the line
// model; 1.7-1.9 with 4-KiB steps), where cutting units at the allowance took 3.1-4.2, and
// 0.47-0.59 times the line model's events (cut units: 0.99-1.0 times). With every request of a
// unit sent when its last line had left the LSU (16 cycles for 2 KiB), one CTA's credits came
// back after 687 cycles on average against the line model's 671 (682 with the requests spread),
// and its time was +2.0 % (+1.2 / +1.2 / +3.4 % for the others).
TEST(BlockModel, StreamsIssueWholeUnitsAtTheLineModelsBandwidth) {
  const core::DeviceSpec line = config::load_device("h200");
  const core::DeviceSpec block = config::load_device("h200", {{"l2.tracking_bytes", "2048"}});
  struct Case {
    std::uint64_t programs, step, total;
    double time_bound, accesses_per_unit;
  };
  const Case cases[] = {{1, 16384, 4 << 20, 0.02, 1.2},
                        {33, 4096, 16 << 20, 0.04, 2.0},
                        {132, 4096, 32 << 20, 0.04, 2.0},
                        {264, 16384, 64 << 20, 0.04, 1.2}};
  for (const Case& c : cases) {
    core::Workload w;
    w.kernel = "stream_read";
    w.programs = c.programs;
    w.bytes_per_step = c.step;
    w.total_bytes = c.total;
    const auto a = engine::simulate(line, make_program(w, line)).at(0);
    const auto b = engine::simulate(block, make_program(w, block)).at(0);
    const std::string what = std::to_string(c.programs) + " x " + std::to_string(c.step);
    const double units = metric(b, "dram__bytes_read.sum") / 2048;
    const double accesses =
        metric(b, "attnsim__l2_misses") + metric(b, "attnsim__l2_near_hits") + metric(b, "attnsim__l2_far_hits");
    EXPECT_EQ(metric(a, "dram__bytes_read.sum"), metric(b, "dram__bytes_read.sum")) << what;
    const double dt = metric(b, "gpu__time_duration.sum") / metric(a, "gpu__time_duration.sum") - 1;
    EXPECT_LT(std::abs(dt), c.time_bound) << what << ": time " << 100 * dt << " %";
    EXPECT_LT(accesses / units, c.accesses_per_unit) << what;
    EXPECT_LT(metric(b, "attnsim__events"), 0.6 * metric(a, "attnsim__events")) << what;
  }
}

// With few sets the block model's coarser replacement shows: an L2 of 2 MiB on h200 (32 sets of
// 2 KiB units per partition) on every kernel of the aligned grid. Measured: time within 10 %,
// DRAM within 18 %, L2 bytes within 2 % (docs/performance.md: do not use the block model to study
// small caches); the test fails if it gets worse than 12 / 20 / 2.5 %. Since far writes leave a
// copy in the writer's near partition (l2_cache.h), flash1 fwd's time differs by 14.1 % (its
// O, m, l read-modify-write per step; DRAM -0.8 %), the other kernels stay within 5.1 %. Since the
// block model issues whole units (StreamsIssueWholeUnitsAtTheLineModelsBandwidth), flash1 fwd
// (4 CTAs, latency-bound) differs by 16.6 % and flash2 causal fwdbwd by 10.2 %; this row moves
// by +-3 points with the L2 size alone (1.875 / 2 / 2.125 / 2.25 MiB: -11.0 / -14.1 / -16.6 /
// -15.6 % before, -13.1 / -16.6 / -18.9 / -18.0 % now). Time bound 18.5 % for flash1 fwd, 12 %
// for the rest. Measured at 49df139 (a unit's DRAM requests spread over its LSU time): flash1 fwd
// -16.2 %, the other kernels within 4.9 % (flash1 causal fwd), DRAM within 7.8 %.
TEST(BlockModel, SmallL2ShowsTheCoarserReplacement) {
  const core::DeviceSpec line = config::load_device("h200", {{"l2.capacity_bytes", "2 MiB"}});
  const core::DeviceSpec block =
      config::load_device("h200", {{"l2.capacity_bytes", "2 MiB"}, {"l2.tracking_bytes", "2048"}});
  for (core::Workload w : grid(true)) {
    w.heads = 4;
    w.kv_heads = 2;
    w.seq_q = w.kernel == "flash_decode" ? 1 : 1024;
    w.seq_kv = w.kernel == "flash_decode" ? 8192 : 1024;
    w.block_m = w.kernel == "standard" ? 128 : 64;
    w.block_n = 64;
    w.block_k = 32;
    w.num_splits = 0;
    const auto d = line_vs_block(w, line, block);
    const std::string what = w.kernel + (w.causal ? " causal " : " ") + std::string(core::to_string(w.pass));
    const double time_bound = w.kernel == "flash1" && !w.causal && w.pass == core::Pass::kFwd ? 0.185 : 0.12;
    EXPECT_LT(std::abs(d.time), time_bound) << what << ": time " << 100 * d.time << " %";
    EXPECT_LT(std::abs(d.dram), 0.20) << what << ": DRAM " << 100 * d.dram << " %";
    EXPECT_LT(std::abs(d.lts), 0.025) << what << ": L2 bytes " << 100 * d.lts << " %";
  }
}

}  // namespace
}  // namespace attnsim::kernels
