// sim.mode: sampled against full on workloads CI can afford: closed-form bytes exact with the L2
// off, time and bytes within the error targets with the L2 on, the sampling recorded, the same
// result twice, launches of several warp groups simulated in full.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/io_counts.h"
#include "sim/core/occupancy.h"
#include "sim/engine/engine.h"
#include "sim/engine/sampler.h"
#include "tests/engine/test_launches.h"

namespace attnsim::engine {
namespace {

using testing::metric;

struct Pair {
  core::KernelResult full, sampled;
};

// `only`: simulate only the launches of that name (all when empty). Sampled with
// sampled_min_ops = 0: most launches here are small on purpose (each reproduces a case of the
// method cheaply), and the engine would simulate them in full
// (Sampled.SmallLaunchesRunInFull).
std::vector<Pair> run_both(const core::DeviceSpec& d, const std::vector<config::Override>& sets,
                           const std::string& only = "", const std::string& kernel = "flash2") {
  const core::Workload w = config::workload_for_kernel(kernel, sets);
  core::TileProgram program = kernels::make_program(w, d);
  if (!only.empty())
    std::erase_if(program.launches, [&](const std::unique_ptr<core::KernelLaunch>& l) { return l->name() != only; });
  EngineOptions full, sampled;
  sampled.sampled = true;
  sampled.sampled_min_ops = 0;  // small launches sampled too (see run_both)
  const auto a = simulate(d, program, full), b = simulate(d, program, sampled);
  std::vector<Pair> out;
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back({a[i], b[i]});
  return out;
}

// run_both for one launch: its pair (the test fails unless there is exactly one).
Pair run_one(const core::DeviceSpec& d, const std::vector<config::Override>& sets, const std::string& only,
             const std::string& kernel) {
  std::vector<Pair> runs = run_both(d, sets, only, kernel);
  EXPECT_EQ(runs.size(), 1u) << only;
  return runs.at(0);
}

// CTAs of `groups` warp groups (4 warps each, no barriers between them), each running `steps`
// equal steps: a 2 KiB load of its own rows, then an `mma`^3 MMA (64x64x64 by default).
class StepsLaunch : public core::KernelLaunch {
 public:
  StepsLaunch(std::uint64_t ctas, std::uint32_t groups, std::uint64_t steps, std::uint32_t mma = 64)
      : ctas_(ctas), groups_(groups), steps_(steps), mma_(mma) {}
  std::string name() const override { return "steps"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = ctas_;
    s.threads_per_cta = groups_ * 128;
    s.regs_per_thread = 64;
    return s;
  }
  std::vector<core::WarpGroupSpec> warp_groups() const override {
    return std::vector<core::WarpGroupSpec>(groups_, {core::WarpRole::kConsumer, 4, 0});
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    return emit_group_step(cta, 0, step, out);
  }
  bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                       std::vector<core::TileOp>& out) const override {
    if (step >= steps_) return false;
    core::TileOp load;
    load.kind = core::OpKind::kLoad;
    load.tensor = core::Tensor::kK;
    load.rows = 16;
    load.row_bytes = 128;
    load.row_stride = 128;
    load.addr = ((cta * groups_ + group) * steps_ + step) * 2048;
    core::TileOp mma;
    mma.kind = core::OpKind::kMma;
    mma.m = mma.n = mma.k = mma_;
    out = {load, mma};
    return true;
  }

 private:
  std::uint64_t ctas_;
  std::uint32_t groups_;
  std::uint64_t steps_;
  std::uint32_t mma_;
};

double rel(double a, double b) { return b != 0 ? std::fabs(a - b) / b : std::fabs(a); }

TEST(Sampled, ClosedFormBytesExactWithTheL2Off) {
  // h200 with the L2 off; 8 SMs so that the 128 CTAs of the second shape make 8 waves and whole
  // CTAs are skipped too.
  for (const char* sms : {"132", "8"}) {
    const core::DeviceSpec d = config::load_device(
        "h200", {{"l2.capacity_bytes", "0"}, {"sm.l1_caches_global_loads", "false"}, {"sm.count", sms}});
    for (const char* causal : {"false", "true"}) {
      const bool small = std::string(sms) == "8";
      const auto runs = run_both(d, {{"heads", "4"}, {"seq", small ? "8192" : "4096"},
                                     {"head_dim", small ? "64" : "128"}, {"causal", causal}});
      for (const Pair& p : runs) {
        const std::string what = std::string("sms ") + sms + " causal " + causal;
        EXPECT_EQ(p.sampled.tensors.dram, p.full.tensors.dram) << what;
        EXPECT_EQ(p.sampled.tensors.lts, p.full.tensors.lts) << what;
        EXPECT_EQ(p.sampled.tensors.smem, p.full.tensors.smem) << what;
        EXPECT_EQ(p.sampled.totals.stats.flops, p.full.totals.stats.flops) << what;
        EXPECT_EQ(p.sampled.totals.stats.wavefronts, p.full.totals.stats.wavefronts) << what;
        EXPECT_EQ(metric(p.sampled, "attnsim__sim_mode"), 1);
        EXPECT_EQ(metric(p.full, "attnsim__sim_mode"), 0);
        EXPECT_EQ(metric(p.full, "attnsim__sampled_fraction"), 1);
        if (std::string(causal) == "true") {
          // CTAs of unequal step counts: detected, simulated in full.
          EXPECT_EQ(metric(p.sampled, "attnsim__sampled_fraction"), 1) << what;
          EXPECT_EQ(p.sampled.totals.cycles, p.full.totals.cycles) << what;
        } else {
          // Sampling took place: most loop steps (and CTAs) were extrapolated, in fewer events.
          EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), small ? 0.1 : 0.5) << what;
          if (small) {
            EXPECT_GT(p.sampled.totals.ctas_skipped, 0u) << what;
          }
          EXPECT_LT(p.sampled.totals.stats.events, p.full.totals.stats.events / 2) << what;
        }
      }
    }
  }
}

// Bytes within the error target (1 %) where the L2 holds the data the simulated steps share,
// and the time within the error estimate the run reports (twice it, as a standard error). The
// time target itself (worst 1 %, median 0.3 %) is not met by the method (docs/sampling.md):
// 2 % here is a regression bound, not the target.
TEST(Sampled, BytesWithinOnePercentAndTimeWithinItsEstimate) {
  const core::DeviceSpec d = config::load_device("h200");
  const std::vector<std::vector<config::Override>> cases = {
      {{"heads", "8"}, {"seq", "4096"}, {"head_dim", "128"}},
      {{"heads", "16"}, {"seq", "4096"}, {"head_dim", "64"}},
  };
  for (const auto& c : cases) {
    for (const Pair& p : run_both(d, c)) {
      const std::string what = p.full.name + " d=" + c[2].value;
      const double err = rel(p.sampled.totals.time_ns, p.full.totals.time_ns);
      EXPECT_LT(err, 2 * p.sampled.totals.sampling_error) << what;
      EXPECT_LT(err, 0.02) << what;
      const double df = static_cast<double>(p.full.totals.dram_read + p.full.totals.dram_write);
      const double ds = static_cast<double>(p.sampled.totals.dram_read + p.sampled.totals.dram_write);
      EXPECT_LT(rel(ds, df), 0.01) << what;
      EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)),
                0.01)
          << what;
      // Steps were skipped: 0.53 for d = 64 (its runs are short beside the 16 warm-up steps), 1.0 if none.
      EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.6) << what;
    }
  }
}

// The DRAM and L2 busy cycles (the busy percentages and the "bound by" line) count the skipped
// work: a skipped step's bytes take no channel or port time, so the busy cycles follow from the
// counted bytes, as a full run's from the bytes its channels and ports moved. Before, the L2's
// left out the CTAs skipped whole (here 37 % low with 16 SMs; flash3 B4 H32 N8192 d128 on the
// h200: 90 % low) and the DRAM's were the timed bytes' scaled with the DRAM bytes, reads and
// writes alike, the final write-back's included (here 19 and 21 % high). One run skips loop
// steps, the other (16 SMs) CTAs whole too.
TEST(Sampled, BusyCyclesCountTheSkippedWork) {
  for (const char* sms : {"132", "16"}) {
    const core::DeviceSpec d = config::load_device("h200", {{"sm.count", sms}});
    const Pair p = run_one(d, {{"heads", "8"}, {"seq", "4096"}, {"head_dim", "128"}}, "", "flash2");
    const std::string what = std::string("sms ") + sms;
    EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.5) << what << ": nothing skipped, the case tests nothing";
    if (std::string(sms) == "16") {
      EXPECT_GT(p.sampled.totals.ctas_skipped, 0u) << what;
    }
    EXPECT_LT(rel(p.sampled.totals.busy.l2, p.full.totals.busy.l2), 0.01) << what;
    // The writes the final write-back leaves out are estimated (16 SMs: -1.8 %; full: some sets
    // overflow and write back during the launch, where the sampled L2 of the simulated CTAs does not).
    EXPECT_LT(rel(p.sampled.totals.busy.dram, p.full.totals.busy.dram), 0.025) << what;
  }
}

// Nsight Compute accounting (no final write-back) and register spills to local memory, whose
// lines are stored again and again: the DRAM writes are the write-backs counted in the warmed L2
// sets, not the bytes stored (the validation rows' setting; 9 % low in DRAM bytes before the
// skipped steps were warmed through the L2).
TEST(Sampled, BytesWithinOnePercentWithoutTheFinalWriteBack) {
  const core::DeviceSpec d = config::load_device("h200", {{"l2.count_final_writeback", "false"}});
  const auto runs = run_both(d, {{"heads", "32"}, {"seq", "4096"}, {"head_dim", "128"}, {"block_m", "128"},
                                 {"block_n", "64"}, {"warps", "4"}, {"regs_per_thread", "255"},
                                 {"smem_per_cta", "65536"}, {"stack_frame_bytes", "112"}});
  for (const Pair& p : runs) {
    auto dram = [](const core::KernelResult& r) { return static_cast<double>(r.totals.dram_read + r.totals.dram_write); };
    EXPECT_LT(rel(dram(p.sampled), dram(p.full)), 0.01) << p.full.name;
    EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)),
              0.01)
        << p.full.name;
    EXPECT_GT(p.full.tensors.dram[core::Tensor::kLocal].write, 0u) << "no spill traffic to test";
    EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.5) << p.full.name;
  }
}

// With the final write-back counted every stored sector of a tensor stored once reaches DRAM once:
// its DRAM writes are exact in sampled mode too, counted when stored, not estimated from the
// write-backs of the warmed L2 sets (O was 6.25 % high here before, the block model's 2 KiB units
// falling unevenly on the sampled sets).
TEST(Sampled, TensorsStoredOnceWriteTheirStoredBytes) {
  const core::DeviceSpec d = config::load_device("h200", {{"l2.tracking_bytes", "2048"}});
  const Pair p = run_one(d, {{"heads", "8"}, {"seq", "2048"}, {"head_dim", "128"}}, "", "flash2");
  EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.6) << "no step skipped: the case tests nothing";
  EXPECT_EQ(p.full.tensors.dram[core::Tensor::kO].write, 8u * 2048 * 128 * 2);
  EXPECT_EQ(p.sampled.tensors.dram[core::Tensor::kO].write, p.full.tensors.dram[core::Tensor::kO].write);
  EXPECT_EQ(p.sampled.totals.dram_write, p.full.totals.dram_write);
}

// The backward's fp32 dQ accumulator: every key/value block's CTA of a head adds its dQ rows into
// the same lines (atomicAdd), so a CTA skipped whole does not write its stored bytes to DRAM; the
// accumulator's write-backs are those counted (its DRAM writes were 5.7x the full run's before).
// An h200 cut to half its SMs, so that the launch has waves enough to skip after its reference.
TEST(Sampled, BackwardAccumulatorWritesAreNotItsStoredBytes) {
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "66"}});
  const auto runs = run_both(d, {{"heads", "32"}, {"seq", "4096"}, {"head_dim", "128"}, {"pass", "fwdbwd"}}, "flash2_bwd");
  ASSERT_EQ(runs.size(), 1u);
  bool skipped = false;
  for (const Pair& p : runs) {
    auto dram = [](const core::KernelResult& r) { return static_cast<double>(r.totals.dram_read + r.totals.dram_write); };
    EXPECT_LT(rel(dram(p.sampled), dram(p.full)), 0.01) << p.full.name;
    EXPECT_LT(rel(static_cast<double>(p.sampled.tensors.dram[core::Tensor::kDQAccum].write),
                  static_cast<double>(p.full.tensors.dram[core::Tensor::kDQAccum].write)),
              0.01);
    EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)),
              0.01);
    skipped = p.sampled.totals.ctas_skipped > 0;
  }
  EXPECT_TRUE(skipped) << "no flash2_bwd CTA skipped whole: the case tests nothing";
}

// A latency-bound decode (K/V from DRAM, a third of the HBM bandwidth used): its 256 CTAs skip
// the same steps at about the same time. Reserved on the HBM channels at the step's start, their
// bytes stood as one queue before the simulated steps of the CTAs still measuring, whose mean
// step time came out high (+3.4 % kernel time); as a fluid over each step's span they slow the
// timed accesses by their share of the bandwidth only.
TEST(Sampled, SkippedStepsTakeTheirShareOfTheBandwidthNotAQueue) {
  const core::DeviceSpec d = config::load_device("h200");
  const Pair p = run_one(d, {{"batch", "8"}, {"heads", "32"}, {"kv_heads", "8"}, {"seq_q", "1"}, {"seq_kv", "16384"},
                             {"head_dim", "128"}}, "flash_decode_split", "flash_decode");
  EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01);
  // 0.54 (its runs are short beside the 16 warm-up steps); 1.0 if nothing is skipped.
  EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.6) << "nothing skipped: the case tests nothing";
}

// The end cycle of every CTA of the one launch of `kernel` (all CTAs traced).
std::vector<double> cta_ends(const core::DeviceSpec& d, const std::string& kernel,
                             const std::vector<config::Override>& sets, bool sampled, std::uint64_t ctas) {
  const core::TileProgram program = kernels::make_program(config::workload_for_kernel(kernel, sets), d);
  std::vector<double> ends(ctas, 0.0);
  EngineOptions o;
  o.sampled = sampled;
  o.sampled_min_ops = 0;  // small launches sampled too (see run_both)
  for (std::uint64_t c = 0; c < ctas; ++c) o.trace_ctas.push_back(c);
  o.trace = [&ends](const TraceRecord& r) { ends.at(r.cta) = std::max(ends.at(r.cta), r.end); };
  simulate(d, program, o);
  return ends;
}

double spread(const std::vector<double>& v) {
  double sum = 0, sumsq = 0;
  for (double x : v) sum += x, sumsq += x * x;
  const double n = static_cast<double>(v.size()), mean = sum / n;
  return std::sqrt(std::max(0.0, sumsq / n - mean * mean));
}

// One wave of 264 equal CTAs (stream_read, 2 per SM, 62 steps of 16 KiB each): the launch ends
// with its slowest CTA. Extrapolated from each CTA's own 10 sampled steps, the CTAs' skipped time
// scattered 2.7 times as much as their times do in a full run (std 793 against 298 cycles), and
// the slowest came out 0.64 % late. Each CTA's mean is shrunk towards the pool of all CTAs' means
// by the share of its sampling noise, by at most one standard error (Sampler::skipped_step_time):
// std 263 cycles.
TEST(Sampled, SkippedStepTimesArePooledAcrossCtasNotEachCtasOwnNoise) {
  const core::DeviceSpec d = config::load_device("h200");
  const std::vector<config::Override> sets = {{"programs", "264"}, {"bytes_per_step", "16384"},
                                              {"total_bytes", "268435456"}};
  const std::vector<double> full = cta_ends(d, "stream_read", sets, false, 264);
  const std::vector<double> sampled = cta_ends(d, "stream_read", sets, true, 264);
  ASSERT_GT(spread(full), 0.0);
  EXPECT_LT(spread(sampled), 1.5 * spread(full)) << spread(sampled) << " against " << spread(full);
  const double last_full = *std::max_element(full.begin(), full.end());
  const double last_sampled = *std::max_element(sampled.begin(), sampled.end());
  EXPECT_LT(rel(last_sampled, last_full), 0.01);
}

// One wave of 128 flash2 CTAs (B1 H8 N2048 d128 on the h200, one per SM, 32 steps) that ends
// with two CTAs 5.7 % slower than the rest in every step of a full run. Shrunk towards the pool
// without a limit, their skipped steps took the others' time and the launch came out 2.3 % fast;
// moved by at most one of their own standard errors, they stay the slow ones (-0.26 %).
TEST(Sampled, ACtaThatIsReallySlowerKeepsItsOwnStepTime) {
  const core::DeviceSpec d = config::load_device("h200");
  const Pair p = run_one(d, {{"heads", "8"}, {"seq", "2048"}, {"head_dim", "128"}}, "", "flash2");
  ASSERT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.6) << "nothing skipped: the case tests nothing";
  EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01);
}

// An h200 cut to a quarter: 33 SMs, HBM 1200 / 950 GB/s (read / write), 15 MiB of L2.
core::DeviceSpec quarter_h200() {
  return config::load_device("h200", {{"sm.count", "33"},
                                      {"hbm.bandwidth_gbps", "1200"},
                                      {"hbm.write_bandwidth_gbps", "950"},
                                      {"l2.capacity_bytes", "15728640"}});
}

// A write-bound launch: the QK^T GEMM of standard d = 64 writes its scores at about the DRAM
// write bandwidth (an h200 cut to a quarter: 33 SMs, HBM 1200 / 950 GB/s, 15 MiB of L2; 124 waves).
// CTAs skipped whole move no bytes themselves; their reference's DRAM bytes join a backlog that
// the channels drain at their rate, and their slot is held until it is drained. Without it the
// simulated CTAs after them found the channels idle and the launch came out 27 % fast, faster than
// its output can be written at all.
TEST(Sampled, CtasSkippedWholeCannotOutrunTheDramBandwidth) {
  const core::DeviceSpec d = quarter_h200();
  const Pair p = run_one(d, {{"heads", "8"}, {"seq", "4096"}, {"head_dim", "64"}}, "standard_qk", "standard");
  ASSERT_GT(p.sampled.totals.ctas_skipped, 0u) << "no CTA skipped whole: the case tests nothing";
  const double written = 8.0 * 4096 * 4096 * 2;  // the fp16 scores, bytes
  const double bound_ns = written / 950.0;          // at 950 GB/s = 950 bytes per ns
  EXPECT_GT(p.full.totals.time_ns, bound_ns);
  EXPECT_GT(p.sampled.totals.time_ns, bound_ns);
  // -0.2 % (-5.0 % before steady launches were measured again); -27 % without the backlog.
  EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.06);
}

// A DRAM-bound GEMM of four waves: standard's P V (128 CTAs of 64 steps) on an h200 cut to a
// quarter (33 SMs, HBM 1200 / 950 GB/s, 15 MiB of L2). The CTAs of every wave after the first
// start together as the wave before retires and queue behind each other at the HBM channels over
// their first steps, so their steps 8-15 are slower than the rest; the first wave's CTAs see the
// launch's step time still moving there (falling, on this device) and vote, and the later CTAs
// take their samples from steps 24-31. With samples from steps 8-15 the launch came out 6.5 % slow.
TEST(Sampled, RunsStillMovingAtTheirSamplesAreSampledLater) {
  const core::DeviceSpec d = quarter_h200();
  const Pair p = run_one(d, {{"heads", "8"}, {"seq", "4096"}, {"head_dim", "128"}}, "standard_pv", "standard");
  EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.6) << "nothing skipped: the case tests nothing";
  EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01);
}

// A launch whose waves agree one to the next but drift over tens of waves: the softmax of
// standard H4 N8192 d128 (32,768 one-row CTAs, 496 waves) on an h200 cut to a quarter. The HBM
// read latency of a full run keeps rising for about 40 waves after the L2 has filled with dirty
// scores, and the CTA time with it. With one reference from the first steady waves the launch came
// out 1.65 % fast; measured again at 2x, 4x ... the waves up to the last steady point, 0.33 %.
TEST(Sampled, SteadyLaunchesAreMeasuredAgainAsTheyGoOn) {
  const core::DeviceSpec d = quarter_h200();
  const Pair p = run_one(d, {{"heads", "4"}, {"seq", "8192"}, {"head_dim", "128"}}, "standard_softmax", "standard");
  ASSERT_GT(p.sampled.totals.ctas_skipped, 0u) << "no CTA skipped whole: the case tests nothing";
  EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.1);
  EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01);
}

// Waves that alternate: 8 SMs of 2 CTAs make waves of 16 CTAs, and the 32 CTAs of a head
// (N4096, 128-row tiles) read its K/V blocks in two waves, the first from DRAM and the second from
// the L2. No two consecutive waves agree, waves two apart do: the launch is steady with a period
// of two waves, and whole CTAs are skipped (none before: 29 % of the ops simulated, as with
// flash2 B1 H32 N65536 on the full h200, 512-CTA heads in 264-CTA waves, simulated whole).
TEST(Sampled, WavesThatAlternateAreSteadyWithAPeriodOfTwo) {
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "8"}});
  for (const Pair& p : run_both(d, {{"heads", "16"}, {"seq", "4096"}, {"head_dim", "64"}})) {
    EXPECT_GT(p.sampled.totals.ctas_skipped, 0u) << p.full.name;
    // 0.15 with whole CTAs skipped (each CTA times its first 16 of 32 steps; the skipped waves
    // start with a wave that reads a head's K/V from DRAM, so waves 4-5 are simulated whole);
    // 0.53 when the alternating waves are never found steady (kMaxPeriod = 1).
    EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.2) << p.full.name;
    EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01) << p.full.name;
    const double df = static_cast<double>(p.full.totals.dram_read + p.full.totals.dram_write);
    const double ds = static_cast<double>(p.sampled.totals.dram_read + p.sampled.totals.dram_write);
    EXPECT_LT(rel(ds, df), 0.01) << p.full.name;
    EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)),
              0.01)
        << p.full.name;
  }
}

// The same alternating waves over 128 waves (64 heads), where the launch is measured again as it
// goes on: each span of CTAs skipped whole covers whole periods and starts with a wave that reads
// its heads' K/V from DRAM. Spans that began with the other wave counted a head's DRAM reads once
// simulated and once more as half of the reference CTA's: the DRAM reads came out 2.2 % high.
TEST(Sampled, SpansOfSkippedWavesKeepThePeriodsPhase) {
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "8"}});
  for (const Pair& p : run_both(d, {{"heads", "64"}, {"seq", "4096"}, {"head_dim", "64"}})) {
    ASSERT_GT(p.sampled.totals.ctas_skipped, 0u) << p.full.name;
    EXPECT_LT(rel(static_cast<double>(p.sampled.totals.dram_read), static_cast<double>(p.full.totals.dram_read)), 0.005)
        << p.full.name;
    EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01) << p.full.name;
  }
}

// A head's CTAs fill about four waves (62 CTAs, 16 per wave) and its K/V fit the L2: only the
// wave that starts a head reads them from DRAM, but the steady waves the reference comes from lie
// inside a head. Counted as the reference alone the CTAs skipped whole gave 50 % of the full
// run's DRAM reads; counted per sharing group (a group new to its wave reads from DRAM, one the
// wave before had hits in the L2: Sampler::fit_group_costs) +0.5 %.
TEST(Sampled, CtasSkippedWholeCountTheWavesThatStartAGroup) {
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "8"}});
  for (const Pair& p : run_both(d, {{"heads", "8"}, {"seq", "7936"}, {"head_dim", "128"}})) {
    ASSERT_GT(p.sampled.totals.ctas_skipped, 100u) << p.full.name;
    EXPECT_LT(rel(static_cast<double>(p.sampled.totals.dram_read), static_cast<double>(p.full.totals.dram_read)), 0.01)
        << p.full.name;
    EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)),
              0.02)
        << p.full.name;
  }
}

// Sampler::probe on launches of 4 slots and the CTAs' step counts `steps(cta)`: does it leave
// something to skip (steps, or whole CTAs of two consecutive equal waves), or is it inert?
bool inert_for(std::uint64_t ctas, std::uint64_t (*steps)(std::uint64_t)) {
  Sampler s(4, ctas, true);
  s.probe(ctas, [steps](std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& ops) {
    if (step >= steps(cta)) return false;
    ops.assign(1, core::TileOp{});
    return true;
  });
  return s.inert();
}

// The span of CTAs skipped whole starts at a wave none of whose CTAs has been dispatched. On the
// teaching preset (2 SMs of one CTA, a 64 KiB L2) the two CTAs of a wave belong to one head and read
// its K/V blocks together, each block once from DRAM. Started at the first wave not yet retired,
// the span put a CTA skipped whole beside a simulated one of its wave: alone, that one read the
// head's K/V itself and ended late, the two slots never ran together again, and every wave after
// the span read K/V twice: DRAM reads +83 %, time +12.3 % against full.
TEST(Sampled, ASpanStartsAtAWaveNoneOfWhoseCtasRuns) {
  const core::DeviceSpec d = config::load_device("teaching", {});
  const Pair p = run_one(d, {{"batch", "2"}, {"heads", "8"}, {"seq", "2048"}, {"head_dim", "64"}}, "", "flash2");
  ASSERT_GT(p.sampled.totals.ctas_skipped, 0u) << "no CTA skipped whole: the case tests nothing";
  EXPECT_LT(rel(static_cast<double>(p.sampled.totals.dram_read), static_cast<double>(p.full.totals.dram_read)), 0.01);
  EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01);
}

TEST(Sampled, ProbeFindsLaunchesWithNothingToSkip) {
  EXPECT_FALSE(inert_for(40, [](std::uint64_t) -> std::uint64_t { return 64; }));  // equal long CTAs: steps skipped
  EXPECT_FALSE(inert_for(40, [](std::uint64_t) -> std::uint64_t { return 3; }));   // short GEMM-like CTAs: whole CTAs
  // Causal-like: every wave holds CTAs of different lengths, which repeat every 8 CTAs (the query
  // blocks of a head): waves of one period (8 CTAs, two of the 4 slots' waves) are compared and
  // CTAs skipped as their class, where there are Sampler::kMinClassWaves (12) such waves.
  EXPECT_FALSE(inert_for(96, [](std::uint64_t c) -> std::uint64_t { return c % 8 + 1; }));
  EXPECT_TRUE(inert_for(95, [](std::uint64_t c) -> std::uint64_t { return c % 8 + 1; }));
  // Not periodic: CTA 95 (a probe) breaks the period.
  EXPECT_TRUE(inert_for(96, [](std::uint64_t c) -> std::uint64_t { return c == 95 ? 9 : c % 8 + 1; }));
  // A period (4096 CTAs) whose waves would exceed Sampler::kMaxClassWave CTAs; with 512 it is found.
  EXPECT_TRUE(inert_for(12 * 4096, [](std::uint64_t c) -> std::uint64_t { return c % 4096 < 2048 ? c % 2 + 1 : c % 2 + 3; }));
  EXPECT_FALSE(inert_for(12 * 512, [](std::uint64_t c) -> std::uint64_t { return c % 512 < 256 ? c % 2 + 1 : c % 2 + 3; }));
  // Each wave uniform, but no two consecutive waves alike.
  EXPECT_TRUE(inert_for(40, [](std::uint64_t c) -> std::uint64_t { return c / 4 + 1; }));
  // Mixed at first, then two equal uniform waves (CTAs 12-19): they could become steady.
  EXPECT_FALSE(inert_for(40, [](std::uint64_t c) -> std::uint64_t { return c < 12 ? c + 1 : c < 20 ? 5 : c; }));
  // Equal waves only at the end, where the tail (the last full and the partial wave) begins.
  EXPECT_TRUE(inert_for(40, [](std::uint64_t c) -> std::uint64_t { return c < 32 ? c + 1 : 5; }));
  // Steady at wave 1 at the earliest, skipped from wave 2 up to the last full wave: four full
  // waves leave one to skip, three none.
  EXPECT_FALSE(inert_for(18, [](std::uint64_t) -> std::uint64_t { return 2; }));
  EXPECT_TRUE(inert_for(15, [](std::uint64_t) -> std::uint64_t { return 2; }));
}

// A causal launch of too few waves has nothing to skip (64 CTAs, 4 heads of 16 query blocks on 16
// slots: four waves of one head): its sampled run is the full run, at the full run's cost (the
// hooks are left out: the same number of events, the same cycles and bytes). Warp-specialized
// CTAs (flash3: 8 slots, eight waves of one head) too.
TEST(Sampled, CausalLaunchesRunAsInFull) {
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "8"}});
  const std::vector<config::Override> causal = {{"heads", "4"}, {"seq", "2048"}, {"head_dim", "64"}, {"causal", "true"}};
  std::vector<Pair> pairs = run_both(d, causal);
  pairs.push_back(run_one(d, causal, "", "flash3"));
  for (const Pair& p : pairs) {
    EXPECT_EQ(p.sampled.totals.cycles, p.full.totals.cycles);
    EXPECT_EQ(p.sampled.totals.stats.events, p.full.totals.stats.events);
    EXPECT_EQ(p.sampled.tensors.dram, p.full.tensors.dram);
    EXPECT_EQ(p.sampled.tensors.lts, p.full.tensors.lts);
    EXPECT_EQ(p.sampled.totals.memory.lts_hit_sectors, p.full.totals.memory.lts_hit_sectors);
    EXPECT_EQ(metric(p.sampled, "attnsim__sampled_fraction"), 1);
    EXPECT_EQ(metric(p.sampled, "attnsim__sim_mode"), 1);
    // `attnsim run` says why nothing was skipped.
    EXPECT_NE(p.sampled.totals.in_full_because.find("unequal step counts"), std::string_view::npos)
        << p.sampled.totals.in_full_because;
    EXPECT_TRUE(p.full.totals.in_full_because.empty());
  }
  // A launch that skips something gives no reason.
  for (const Pair& p : run_both(d, {{"heads", "4"}, {"seq", "4096"}, {"head_dim", "128"}})) {
    ASSERT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 1);
    EXPECT_TRUE(p.sampled.totals.in_full_because.empty()) << p.sampled.totals.in_full_because;
  }
}

TEST(Sampled, CausalLaunchesSkipWholeCtasOfEachClass) {
  // Causal flash2 and flash3 on an h200 cut to 8 SMs: 16 query blocks per head of 1 to 32 K/V steps
  // (flash3: 1 to 12), 16 heads, 16 slots (flash3: 8). The step counts repeat every 16 CTAs (a
  // head), so waves of one head are compared and later heads' CTAs are skipped as the mean CTA of
  // their query block in the steady waves (flash3's warp-specialized CTAs by group 0's steps).
  const std::vector<config::Override> sets = {{"heads", "16"}, {"seq", "2048"}, {"head_dim", "128"}, {"causal", "true"}};
  for (const char* kernel : {"flash2", "flash3"}) {
    const Pair p = run_one(config::load_device("h200", {{"sm.count", "8"}}), sets, "", kernel);
    ASSERT_GT(p.sampled.totals.ctas_skipped, 0u) << kernel << ": " << p.sampled.totals.in_full_because;
    EXPECT_LT(metric(p.sampled, "attnsim__sampled_fraction"), 0.7) << kernel;
    EXPECT_TRUE(p.sampled.totals.in_full_because.empty()) << p.sampled.totals.in_full_because;
    EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01) << kernel;
    auto dram = [](const core::KernelResult& r) { return static_cast<double>(r.totals.dram_read + r.totals.dram_write); };
    EXPECT_LT(rel(dram(p.sampled), dram(p.full)), 0.01) << kernel;
    EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)),
              0.01)
        << kernel;
    EXPECT_EQ(p.sampled.totals.stats.flops, p.full.totals.stats.flops) << kernel;  // each class's op stream, exactly
    EXPECT_EQ(p.sampled.tensors.smem, p.full.tensors.smem) << kernel;
    // With the L2 off the bytes are the closed forms' (each class's, exactly).
    const Pair off = run_one(config::load_device("h200", {{"sm.count", "8"},
                                                          {"l2.capacity_bytes", "0"},
                                                          {"sm.l1_caches_global_loads", "false"}}),
                             sets, "", kernel);
    ASSERT_GT(off.sampled.totals.ctas_skipped, 0u) << kernel;
    EXPECT_EQ(off.sampled.tensors.dram, off.full.tensors.dram) << kernel;
    EXPECT_EQ(off.sampled.tensors.lts, off.full.tensors.lts) << kernel;
  }
}

TEST(Sampled, SameResultTwice) {
  // A causal launch on the h200 (inert: too few waves of classes) and one whose CTAs are skipped
  // whole by class (an 8-SM h200).
  const std::vector<std::pair<core::DeviceSpec, std::vector<config::Override>>> cases = {
      {config::load_device("h200"), {{"heads", "4"}, {"seq", "2048"}, {"causal", "true"}}},
      {config::load_device("h200", {{"sm.count", "8"}}),
       {{"heads", "16"}, {"seq", "2048"}, {"head_dim", "128"}, {"causal", "true"}}}};
  for (const auto& [d, sets] : cases) {
    const core::Workload w = config::workload_for_kernel("flash2", sets);
    const core::TileProgram program = kernels::make_program(w, d);
    EngineOptions o;
    o.sampled = true;
    o.sampled_min_ops = 0;  // small launches sampled too (see run_both)
    const auto a = simulate(d, program, o), b = simulate(d, program, o);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].totals.cycles, b[i].totals.cycles);
      EXPECT_EQ(a[i].totals.ctas_skipped, b[i].totals.ctas_skipped);
      EXPECT_EQ(a[i].tensors.dram, b[i].tensors.dram);
      EXPECT_EQ(a[i].totals.memory.lts_sectors, b[i].totals.memory.lts_sectors);
    }
  }
}

// A launch of Sampler::kEndSpanWaves (128) waves or more, of CTAs of Sampler::kMinSteps (32)
// steps or more, skips CTAs whole up to its end: no rebuilding wave, no simulated tail. flash2 B2
// H32 N4096 d128 on an h200 cut to 8 SMs: 2,048 CTAs of 64 steps, 16 per wave, 128 waves
// (sampled: 0.07 % fast with the tail simulated, 0.09 % without); with 31 heads (124 waves) the
// rebuilding wave and the tail are still simulated.
TEST(Sampled, LongLaunchesSkipCtasUpToTheirEnd) {
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "8"}});
  const std::uint64_t per = 16;  // 2 CTAs per SM
  const Pair p = run_one(d, {{"batch", "2"}, {"heads", "32"}, {"seq", "4096"}, {"head_dim", "128"}}, "", "flash2");
  ASSERT_EQ(p.full.totals.ctas, 128 * per);
  ASSERT_GE(128u, Sampler::kEndSpanWaves) << "the case no longer reaches the rule";
  // A head's 32 CTAs fill two waves, so the waves repeat with a period of two: steady after waves
  // 0-3, the span starting at wave 6 (in phase, none of its CTAs dispatched). Waves 0-5 are
  // simulated, none after them (with the tail simulated: 8 waves).
  EXPECT_LE(p.full.totals.ctas - p.sampled.totals.ctas_skipped, 6 * per);
  EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01);
  auto dram = [](const core::KernelResult& r) { return static_cast<double>(r.totals.dram_read + r.totals.dram_write); };
  EXPECT_LT(rel(dram(p.sampled), dram(p.full)), 0.01);
  EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)), 0.01);
  // 124 waves (sampled only): the same first waves, then the rebuilding and the last wave.
  const core::Workload w = config::workload_for_kernel("flash2", {{"batch", "2"}, {"heads", "31"}, {"seq", "4096"}, {"head_dim", "128"}});
  EngineOptions o;
  o.sampled = true;
  const auto q = simulate(d, kernels::make_program(w, d), o).at(0);
  ASSERT_EQ(q.totals.ctas, 124 * per);
  ASSERT_GT(q.totals.ctas_skipped, 0u) << "no CTA skipped whole: the case tests nothing";
  EXPECT_GE(q.totals.ctas - q.totals.ctas_skipped, (p.full.totals.ctas - p.sampled.totals.ctas_skipped) + 2 * per);
}

// `program` run sampled, sampled without fast-forwarding or extrapolated runs
// (EngineOptions::sampled_fast_forward), and, with `full`, in full.
struct WithAndWithout {
  core::KernelResult full, sampled, without;
};
WithAndWithout run_with_and_without(const core::DeviceSpec& d, const core::TileProgram& program, bool full) {
  EngineOptions sampled, without;
  sampled.sampled = true;
  without = sampled;
  without.sampled_fast_forward = false;
  WithAndWithout r{{}, simulate(d, program, sampled).at(0), simulate(d, program, without).at(0)};
  if (full) r.full = simulate(d, program, EngineOptions{}).at(0);
  return r;
}
double dram_of(const core::KernelResult& r) { return static_cast<double>(r.totals.dram_read + r.totals.dram_write); }
double lts_of(const core::KernelResult& r) { return static_cast<double>(r.totals.memory.lts_bytes); }

// The CTAs dispatched after the reference waves of a launch that skips CTAs whole to its end
// (and before that span) count as the reference CTA and fast-forward: after their run's warm-up
// steps they skip every further step unwarmed, without the sample blocks of 4 steps that the
// reference waves' CTAs take every Sampler::kPeriod steps (3 in a run of 256 steps). 128 waves
// of 256-step CTAs on the small GPU (a 2 KiB load and a 16^3 MMA per step): at least the wave
// after the reference waves fast-forwards, and the results stay those of a sampled run without it.
TEST(Sampled, CtasBetweenTheReferenceWavesAndTheSpanFastForward) {
  const core::DeviceSpec d = testing::small_gpu();
  const std::uint64_t per = core::compute_occupancy(d.sm, {128, 64, 0, std::nullopt}).active_blocks * d.sm.count;
  constexpr std::uint64_t kSteps = 256;
  ASSERT_GE(128u, Sampler::kEndSpanWaves) << "the case no longer reaches the rule";
  static_assert(Sampler::kWarmSteps == 16 && Sampler::kPeriod == 64 && Sampler::kBlockSteps == 4,
                "3 sample blocks of 4 steps in a run of kSteps");
  core::TileProgram program;
  program.launches.push_back(std::make_unique<StepsLaunch>(128 * per, 1, kSteps, 16));
  const auto [a, b, c] = run_with_and_without(d, program, true);
  EXPECT_EQ(c.totals.ctas_fast_forwarded, 0u);
  EXPECT_GE(b.totals.ctas_fast_forwarded, per);
  EXPECT_EQ(b.totals.ctas_skipped, c.totals.ctas_skipped);
  auto steps = [&](const core::KernelResult& r) { return r.totals.sampled_fraction * static_cast<double>(r.totals.ctas * kSteps); };
  EXPECT_LE(steps(b), steps(c) - 12.0 * static_cast<double>(b.totals.ctas_fast_forwarded) + 0.5);
  EXPECT_LT(rel(b.totals.time_ns, c.totals.time_ns), 0.005);
  EXPECT_LT(rel(dram_of(b), dram_of(c)), 0.005);
  EXPECT_LT(rel(lts_of(b), lts_of(c)), 0.005);
  EXPECT_EQ(b.totals.stats.flops, a.totals.stats.flops);
  EXPECT_EQ(b.totals.stats.lsu_bytes, a.totals.stats.lsu_bytes);
}

// A CTA skipped whole is emitted once per step that its check reads: start_cta emits steps 0 and 1
// (the sharing keys), and equal_cta takes the first and last steps' signatures and the end of
// the CTA from them where it can instead of emitting them again. 64 waves of one- and two-step
// CTAs on the small GPU: every CTA skipped whole has each of its steps emitted once (before,
// a one-step CTA's step 0 three times, as its first and its last step), simulated CTAs twice.
class CountedSteps : public StepsLaunch {
 public:
  CountedSteps(std::uint64_t ctas, std::uint64_t steps) : StepsLaunch(ctas, 1, steps, 16), calls_(ctas * (steps + 1)), steps_(steps) {}
  bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                       std::vector<core::TileOp>& out) const override {
    ++calls_[cta * (steps_ + 1) + std::min(step, steps_)];
    return StepsLaunch::emit_group_step(cta, group, step, out);
  }
  std::uint64_t calls(std::uint64_t cta, std::uint64_t step) const { return calls_[cta * (steps_ + 1) + step]; }

 private:
  mutable std::vector<std::uint64_t> calls_;
  std::uint64_t steps_;
};

TEST(Sampled, CtasSkippedWholeAreEmittedOncePerStep) {
  const core::DeviceSpec d = testing::small_gpu();
  const std::uint64_t per = core::compute_occupancy(d.sm, {128, 64, 0, std::nullopt}).active_blocks * d.sm.count;
  for (const std::uint64_t steps : {1u, 2u}) {
    core::TileProgram program;
    program.launches.push_back(std::make_unique<CountedSteps>(64 * per, steps));
    const auto& launch = static_cast<const CountedSteps&>(*program.launches[0]);
    EngineOptions sampled;
    sampled.sampled = true;
    sampled.sampled_min_ops = 0;
    const core::KernelResult r = simulate(d, program, sampled).at(0);
    ASSERT_GT(r.totals.ctas_skipped, 0u) << steps;
    const std::uint64_t n = 64 * per;
    std::vector<std::uint64_t> probed(n, 0);  // Sampler::probe counts the steps of kProbes CTAs first
    for (std::uint32_t i = 0; i < Sampler::kProbes; ++i) probed[(n - 1) * i / (Sampler::kProbes - 1)] = 1;
    std::uint64_t once = 0;
    for (std::uint64_t cta = 0; cta < n; ++cta) {
      bool each_once = true;
      for (std::uint64_t step = 0; step < steps; ++step) each_once = each_once && launch.calls(cta, step) == 1 + probed[cta];
      once += each_once;
    }
    EXPECT_EQ(once, r.totals.ctas_skipped) << steps;
  }
}

// In a launch of Sampler::kEndSpanWaves waves or more, the CTAs of the reference waves skip the
// middle of a long run unwarmed, its memory counts extrapolated from its steps since step 128;
// the run's last steps are warmed until they have brought in 1.5 L2s (Sampler::kTailCover).
// flash2 B1 H8 seq_q 16384 seq_kv 32768 d128 on an h200 cut to 4 SMs and a 1 MiB L2: 1,024 CTAs
// of 514 steps, 8 per wave (128 waves); a head's 8 CTAs bring 32 KiB into the L2 per step, so
// steps 258 ... about 465 are extrapolated, and with them the sample blocks there. A stream
// that asks for more than a quarter of the HBM rate extrapolates nothing (its steps would load
// no bandwidth): the small GPU's 512-step streams of 128 waves.
TEST(Sampled, LongRunsOfLongLaunchesExtrapolateTheirMiddle) {
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "4"}, {"l2.capacity_bytes", "1048576"}});
  const core::Workload w = config::workload_for_kernel(
      "flash2", {{"heads", "8"}, {"seq_q", "16384"}, {"seq_kv", "32768"}, {"head_dim", "128"}});
  const auto [a, b, c] = run_with_and_without(d, kernels::make_program(w, d), true);
  const std::uint64_t per = 8, steps = 514;
  ASSERT_EQ(a.totals.ctas, 128 * per);
  auto simulated = [&](const core::KernelResult& r) { return r.totals.sampled_fraction * static_cast<double>(r.totals.ctas * steps); };
  // Beyond the 7 sample blocks of 4 steps that each CTA that fast-forwards leaves out, at least
  // a wave's CTAs leave out 3 more.
  ASSERT_GT(b.totals.ctas_fast_forwarded, 0u);
  EXPECT_GE(b.totals.ctas_extrapolated, per);
  EXPECT_EQ(c.totals.ctas_extrapolated, 0u);
  EXPECT_GE(simulated(c) - simulated(b), 28.0 * static_cast<double>(b.totals.ctas_fast_forwarded) + 12.0 * per - 0.5);
  EXPECT_LT(rel(b.totals.time_ns, a.totals.time_ns), 0.01);
  EXPECT_LT(rel(dram_of(b), dram_of(a)), 0.01);
  EXPECT_LT(rel(lts_of(b), lts_of(a)), 0.01);
  // The extrapolated counts stand for what warming those steps counts (0.6 % of the DRAM bytes
  // and 1 % of the L2 bytes are the reference waves' extrapolated steps).
  EXPECT_LT(rel(dram_of(b), dram_of(c)), 0.002);
  EXPECT_LT(rel(lts_of(b), lts_of(c)), 0.002);
  EXPECT_EQ(b.totals.stats.flops, a.totals.stats.flops);

  // The stream on the small GPU: the only steps not simulated beside a run without either are
  // the 7 sample blocks (at steps 76, 140, ... 460) of each CTA that fast-forwards.
  const core::DeviceSpec small = testing::small_gpu();
  const std::uint64_t slots = core::compute_occupancy(small.sm, {128, 64, 0, std::nullopt}).active_blocks * small.sm.count;
  core::TileProgram stream;
  stream.launches.push_back(std::make_unique<StepsLaunch>(128 * slots, 1, 512, 16));
  const auto [unused, e, f] = run_with_and_without(small, stream, false);
  auto steps512 = [](const core::KernelResult& r) { return r.totals.sampled_fraction * static_cast<double>(r.totals.ctas * 512); };
  ASSERT_GT(e.totals.ctas_fast_forwarded, 0u);
  EXPECT_EQ(e.totals.ctas_extrapolated, 0u);
  EXPECT_NEAR(steps512(f) - steps512(e), 28.0 * static_cast<double>(e.totals.ctas_fast_forwarded), 0.5);
}

TEST(Sampled, OnlyOneGroupLaunchesAreSampled) {
  // The same steps in one warp group are sampled; in two groups no step is skipped (and 256
  // CTAs on the small GPU are too few waves to skip whole CTAs): the launch runs as in full.
  const core::DeviceSpec d = testing::small_gpu();
  EngineOptions full, sampled;
  sampled.sampled = true;
  sampled.sampled_min_ops = 0;  // small launches sampled too (see run_both)
  for (std::uint32_t groups : {1u, 2u}) {
    core::TileProgram program;
    program.launches.push_back(std::make_unique<StepsLaunch>(64, groups, 256));
    const auto a = simulate(d, program, full).at(0), b = simulate(d, program, sampled).at(0);
    EXPECT_TRUE(b.totals.sampled);
    if (groups == 1) {
      EXPECT_LT(b.totals.sampled_fraction, 0.5);
      continue;
    }
    EXPECT_EQ(b.totals.sampled_fraction, 1.0);
    EXPECT_EQ(b.totals.ctas_skipped, 0u);
    EXPECT_EQ(a.totals.cycles, b.totals.cycles);
    EXPECT_EQ(a.tensors.dram, b.tensors.dram);
    EXPECT_EQ(a.totals.stats.flops, b.totals.stats.flops);
  }
}

// Warp-specialized CTAs (flash3: a TMA producer and wgmma consumer warp groups with mbarriers)
// are skipped whole once the waves are steady, never a step: a skipped step of one group would
// leave the others' barrier phases behind. Their op-stream counts are described from their ops.
TEST(Sampled, WarpSpecializedLaunchesSkipWholeCtasNotSteps) {
  const core::DeviceSpec d = config::load_device("h100-sxm");
  const Pair p = run_one(d, {{"batch", "4"}, {"heads", "16"}, {"seq", "4096"}, {"head_dim", "128"}}, "", "flash3");
  ASSERT_GT(p.sampled.totals.ctas_skipped, 0u) << "no CTA skipped whole: the case tests nothing";
  // Every CTA has the same ops: the simulated fraction is that of the CTAs not skipped whole.
  const double simulated_ctas = 1.0 - static_cast<double>(p.sampled.totals.ctas_skipped) / static_cast<double>(p.full.totals.ctas);
  EXPECT_NEAR(metric(p.sampled, "attnsim__sampled_fraction"), simulated_ctas, 1e-9);
  EXPECT_LT(rel(p.sampled.totals.time_ns, p.full.totals.time_ns), 0.01);
  auto dram = [](const core::KernelResult& r) { return static_cast<double>(r.totals.dram_read + r.totals.dram_write); };
  EXPECT_LT(rel(dram(p.sampled), dram(p.full)), 0.01);
  EXPECT_LT(rel(static_cast<double>(p.sampled.totals.memory.lts_bytes), static_cast<double>(p.full.totals.memory.lts_bytes)), 0.01);
  EXPECT_EQ(p.sampled.totals.stats.flops, p.full.totals.stats.flops);
  EXPECT_EQ(p.sampled.totals.stats.wavefronts, p.full.totals.stats.wavefronts);
  EXPECT_EQ(p.sampled.tensors.smem, p.full.tensors.smem);
}

// With the L2 off the bytes of warp-specialized CTAs skipped whole are exact (the closed forms).
TEST(Sampled, WarpSpecializedClosedFormBytesExactWithTheL2Off) {
  const core::DeviceSpec d = config::load_device(
      "h200", {{"l2.capacity_bytes", "0"}, {"sm.l1_caches_global_loads", "false"}, {"sm.count", "8"}});
  const Pair p = run_one(d, {{"heads", "4"}, {"seq", "4096"}, {"head_dim", "64"}}, "", "flash3");
  ASSERT_GT(p.sampled.totals.ctas_skipped, 0u) << "no CTA skipped whole: the case tests nothing";
  EXPECT_EQ(p.sampled.tensors.dram, p.full.tensors.dram);
  EXPECT_EQ(p.sampled.tensors.lts, p.full.tensors.lts);
  EXPECT_EQ(p.sampled.tensors.smem, p.full.tensors.smem);
  EXPECT_EQ(p.sampled.totals.stats.flops, p.full.totals.stats.flops);
  EXPECT_EQ(p.sampled.totals.stats.wavefronts, p.full.totals.stats.wavefronts);
}

// Set sampling keeps at least 64 L2 sets: on the teaching preset (a 128-set L2) a stride of 16
// warmed 8 sets, and the skipped steps' DRAM reads, a ratio estimate over them, came out 3.4 %
// low (flash1 B2 H4 seq_q 100 seq_kv 4096, steps skipped); with every other set warmed, 0.5 %.
// CTAs that read a block they share with one CTA of each later wave (K, 16 KiB, at step 0), then
// stream 2 KiB of their own per step (Q, 255 steps): in a full run each wave's stream evicts the
// shared blocks before the next wave reads them again. Sampled, the streaming steps are skipped
// and warmed in one L2 set in 16 only, so the shared blocks survive in the other sets and the
// later waves' timed reads hit there; the sampled sets see every access and miss as the full run
// does (MemorySystem::correct_timed_misses counts the other sets' timed reads at their rate).
class RereadLaunch : public core::KernelLaunch {
 public:
  RereadLaunch(std::uint64_t groups, std::uint64_t waves) : groups_(groups), waves_(waves) {}
  std::string name() const override { return "reread"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = groups_ * waves_;
    s.threads_per_cta = 1024;  // one CTA per SM
    s.regs_per_thread = 64;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    if (step >= kSteps) return false;
    core::TileOp load;
    load.kind = core::OpKind::kLoad;
    load.row_bytes = load.row_stride = 128;
    if (step == 0) {
      load.tensor = core::Tensor::kK;
      load.rows = 128;
      load.addr = (cta % groups_) * 16384;
    } else {
      load.tensor = core::Tensor::kQ;
      load.rows = 16;
      load.addr = (std::uint64_t{1} << 32) + (cta * kSteps + step) * 2048;
    }
    out = {load};
    return true;
  }
  static constexpr std::uint64_t kSteps = 256;

 private:
  std::uint64_t groups_, waves_;
};

TEST(Sampled, TimedReadsInUnwarmedSetsCountAtTheSampledSetsMissRate) {
  const core::DeviceSpec d = testing::small_gpu();
  const std::uint64_t slots = core::compute_occupancy(d.sm, {1024, 64, 0, std::nullopt}).active_blocks * d.sm.count;
  core::TileProgram program;
  program.launches.push_back(std::make_unique<RereadLaunch>(slots, 4));
  EngineOptions full, sampled;
  sampled.sampled = true;
  sampled.sampled_min_ops = 0;
  EngineOptions uncorrected = sampled;
  uncorrected.sampled_timed_miss_correction = false;
  const core::KernelResult a = simulate(d, program, full).at(0), b = simulate(d, program, sampled).at(0),
                           c = simulate(d, program, uncorrected).at(0);
  auto k_reads = [](const core::KernelResult& r) { return static_cast<double>(r.tensors.dram[core::Tensor::kK].read); };
  ASSERT_LT(b.totals.sampled_fraction, 0.5) << "no step skipped: the case tests nothing";
  ASSERT_GT(k_reads(a), 3.5 * static_cast<double>(slots * 16384)) << "the full run's later waves should miss";
  EXPECT_GT(rel(k_reads(c), k_reads(a)), 0.3) << "uncorrected, the later waves hit in the unwarmed sets";
  EXPECT_LT(rel(k_reads(b), k_reads(a)), 0.05);
  EXPECT_LT(rel(dram_of(b), dram_of(a)), 0.02);
  EXPECT_EQ(b.tensors.dram[core::Tensor::kQ].read, c.tensors.dram[core::Tensor::kQ].read) << "Q streams: no bias";

  // Over 8 waves CTAs are skipped whole with the reference CTA's counts, scaled by the factor
  // the timed reads' DRAM bytes grew by: closer, not exact (the reference mixes cold and warm
  // waves in its own proportion).
  core::TileProgram longer;
  longer.launches.push_back(std::make_unique<RereadLaunch>(slots, 8));
  const core::KernelResult e = simulate(d, longer, full).at(0), f = simulate(d, longer, sampled).at(0),
                           g = simulate(d, longer, uncorrected).at(0);
  ASSERT_GT(f.totals.ctas_skipped, 0u);
  EXPECT_LT(rel(k_reads(f), k_reads(e)), 0.5 * rel(k_reads(g), k_reads(e)));
}

TEST(Sampled, SetSamplingKeepsEnoughSets) {
  const core::DeviceSpec d = config::load_device("teaching", {});
  double full = 0, sampled = 0, fraction = 1;
  for (const Pair& p : run_both(d, {{"batch", "2"}, {"heads", "4"}, {"seq_q", "100"}, {"seq_kv", "4096"}, {"head_dim", "64"}},
                                "", "flash1")) {
    full += static_cast<double>(p.full.totals.dram_read);
    sampled += static_cast<double>(p.sampled.totals.dram_read);
    fraction = std::min(fraction, metric(p.sampled, "attnsim__sampled_fraction"));
  }
  ASSERT_LT(fraction, 0.6) << "no step skipped: the case tests nothing";
  EXPECT_LT(rel(sampled, full), 0.01);
}

// A scratchpad core holds tens of CTAs (32 of flash2 B2 H8 N4096 d128 on scratchpad-accel): a CTA
// timing its steps beside others that sleep through skipped ones found the core's pipes idle and
// the run came out -22.9 % against full (-31 % with d 256). Its launches run in full.
// A launch of fewer tile ops than EngineOptions::sampled_min_ops (131,072) runs in full: its
// full run costs a few tens of milliseconds, and sampling it only added its error. stream_read
// with one CTA of 256 steps on the h200 (about 800 ops) came out 1.03 % fast sampled
// (`scripts/same_results.sh`'s worst row); now it is the full run. A launch above the threshold
// (flash2 B1 H8 N4096 d128: 256 CTAs of 64 steps) is still sampled with the default options.
TEST(Sampled, SmallLaunchesRunInFull) {
  const core::DeviceSpec d = config::load_device("h200");
  auto run = [&](const std::string& kernel, const std::vector<config::Override>& sets, bool sampled) {
    const core::Workload w = config::workload_for_kernel(kernel, sets);
    EngineOptions o;  // the defaults, sampled_min_ops included
    o.sampled = sampled;
    return simulate(d, kernels::make_program(w, d), o);
  };
  // flash1 B1 H4 N1024 d64 writes O: simulated in full it must leave the L2 whole and count the
  // write-backs as full does (the first build of this rule left set sampling on: DRAM +17 %).
  const std::vector<std::pair<std::string, std::vector<config::Override>>> small = {
      {"stream_read", {{"programs", "1"}, {"bytes_per_step", "4096"}, {"total_bytes", "1048576"}}},
      {"flash1", {{"heads", "4"}, {"seq", "1024"}, {"head_dim", "64"}}}};
  for (const auto& [kernel, sets] : small) {
    const auto full = run(kernel, sets, false), sampled = run(kernel, sets, true);
    ASSERT_EQ(full.size(), sampled.size()) << kernel;
    for (std::size_t i = 0; i < full.size(); ++i) {
      EXPECT_EQ(sampled[i].totals.cycles, full[i].totals.cycles) << kernel;
      EXPECT_EQ(sampled[i].tensors.dram, full[i].tensors.dram) << kernel;
      EXPECT_EQ(sampled[i].tensors.lts, full[i].tensors.lts) << kernel;
      EXPECT_EQ(sampled[i].totals.sampled_fraction, 1.0) << kernel;
      EXPECT_EQ(sampled[i].totals.in_full_because,
                "the launch is small (fewer tile ops than sim.min_ops, 131,072 by default)")
          << kernel;
    }
  }
  EngineOptions defaults;
  EXPECT_EQ(defaults.sampled_min_ops, 131'072u) << "the message above names the default";
  const auto larger = run("flash2", {{"heads", "8"}, {"seq", "4096"}, {"head_dim", "128"}}, true);
  EXPECT_LT(larger[0].totals.sampled_fraction, 0.5);
  EXPECT_TRUE(larger[0].totals.in_full_because.empty());
}

TEST(Sampled, ScratchpadLaunchesRunInFull) {
  const core::DeviceSpec d = config::load_device("scratchpad-accel");
  for (const Pair& p : run_both(d, {{"batch", "2"}, {"heads", "8"}, {"seq", "4096"}, {"head_dim", "128"}})) {
    EXPECT_EQ(p.full.totals.cycles, p.sampled.totals.cycles) << p.full.name;
    EXPECT_EQ(p.full.tensors.dram, p.sampled.tensors.dram) << p.full.name;
    EXPECT_EQ(p.sampled.totals.sampled_fraction, 1.0) << p.full.name;
    EXPECT_EQ(p.sampled.totals.in_full_because, "scratchpad cores: samples beside skipped steps would find the pipes idle");
  }
}

TEST(Sampled, ClusterLaunchesRunInFull) {
  // The h200 standard GEMMs with gemm_ws are 1x2 clusters sharing TMA multicast loads: a CTA
  // skipped whole would leave its partner's loads and barriers behind, so they run in full,
  // recorded as sampled with every op simulated. Enough waves that one-group launches of this
  // size skip whole CTAs.
  const core::DeviceSpec d = config::load_device("h200");
  const core::TileProgram program = kernels::make_program(
      config::workload_for_kernel("standard", {{"heads", "32"}, {"seq", "1024"}, {"head_dim", "128"}, {"gemm_ws", "true"}}), d);
  EngineOptions full, sampled;
  sampled.sampled = true;
  sampled.sampled_min_ops = 0;  // small launches sampled too (see run_both)
  const auto a = simulate(d, program, full), b = simulate(d, program, sampled);
  ASSERT_EQ(a.size(), b.size());
  bool clusters = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (program.launches[i]->shape().cluster_size <= 1) continue;  // standard's softmax is sampled
    clusters = true;
    EXPECT_EQ(a[i].totals.cycles, b[i].totals.cycles) << "launch " << i;
    EXPECT_EQ(a[i].tensors.dram, b[i].tensors.dram) << "launch " << i;
    EXPECT_EQ(a[i].totals.memory.lts_sectors, b[i].totals.memory.lts_sectors) << "launch " << i;
    EXPECT_TRUE(b[i].totals.sampled);
    EXPECT_EQ(b[i].totals.sampled_fraction, 1.0) << "launch " << i;
    EXPECT_EQ(b[i].totals.ctas_skipped, 0u) << "launch " << i;
    EXPECT_EQ(b[i].totals.in_full_because, "its CTAs run in clusters") << "launch " << i;  // what `run` prints
  }
  EXPECT_TRUE(clusters) << "no cluster launch";
}

TEST(Sampled, ModeIsAWorkloadKey) {
  EXPECT_EQ(config::workload_for_kernel("flash2", {{"sim.mode", "sampled"}}).sim_mode, core::SimMode::kSampled);
  EXPECT_EQ(config::workload_for_kernel("flash2", {}).sim_mode, core::SimMode::kFull);
  // sim.min_ops: the small-launch threshold (SmallLaunchesRunInFull), 0 to sample every launch;
  // written back only where it is not the default.
  const core::Workload w = config::workload_for_kernel("flash2", {{"sim.mode", "sampled"}, {"sim.min_ops", "0"}});
  EXPECT_EQ(w.sim_min_ops, 0u);
  EXPECT_EQ(config::workload_for_kernel("flash2", {}).sim_min_ops, core::kDefaultSampledMinOps);
  EXPECT_NE(config::workload_to_yaml(w).find("sim:\n  mode: sampled\n  min_ops: 0\n"), std::string::npos)
      << config::workload_to_yaml(w);
  EXPECT_EQ(config::workload_to_yaml(config::workload_for_kernel("flash2", {{"sim.mode", "sampled"}})).find("min_ops"),
            std::string::npos);
  try {
    config::workload_for_kernel("flash2", {{"sim.mode", "fast"}});
    FAIL() << "sim.mode: fast accepted";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sim.mode"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("full, sampled"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnsim::engine
