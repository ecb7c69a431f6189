// The op timeline of traced CTAs (EngineOptions::trace, `attnsim run --trace`): every op a traced
// CTA's program emits is reported once, in program order per warp group, each starting where
// the group left the one before; untraced CTAs report nothing; tracing changes no result; in
// sampled mode skipped steps and CTAs skipped whole are records of their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "kernels/registry.h"
#include "sim/config/config.h"
#include "sim/config/workload_loader.h"
#include "sim/engine/engine.h"

namespace attnsim::engine {
namespace {

struct Seen {
  std::size_t launch;
  std::uint64_t cta;
  std::uint32_t group;
  std::uint64_t step;
  std::uint32_t op;
  core::OpKind kind;
  double start, end;
  TraceRecord::Skipped skipped;
};

std::vector<Seen> trace_run(const core::Workload& w, const core::DeviceSpec& d, std::vector<std::uint64_t> ctas,
                            std::vector<core::KernelResult>* results = nullptr) {
  const core::TileProgram program = kernels::make_program(w, d);
  std::vector<Seen> seen;
  EngineOptions o;
  o.trace_ctas = std::move(ctas);
  o.sampled = w.sim_mode == core::SimMode::kSampled;
  o.trace = [&seen](const TraceRecord& r) {
    seen.push_back({r.launch, r.cta, r.group, r.step, r.op_index, r.op ? r.op->kind : core::OpKind::kBarrier, r.start,
                    r.end, r.skipped});
  };
  auto out = simulate(d, program, o);
  if (results) *results = std::move(out);
  return seen;
}

// Every op the program emits for (launch, cta), per group, in order: (step, index, kind).
std::map<std::uint32_t, std::vector<std::tuple<std::uint64_t, std::uint32_t, core::OpKind>>> emitted(
    const core::TileProgram& program, std::size_t launch, std::uint64_t cta) {
  std::map<std::uint32_t, std::vector<std::tuple<std::uint64_t, std::uint32_t, core::OpKind>>> out;
  const core::KernelLaunch& l = *program.launches[launch];
  const auto groups = std::max<std::size_t>(1, l.warp_groups().size());
  for (std::uint32_t g = 0; g < groups; ++g) {
    std::vector<core::TileOp> ops;
    for (std::uint64_t step = 0; ops.clear(), l.emit_group_step(cta, g, step, ops); ++step)
      for (std::uint32_t i = 0; i < ops.size(); ++i) out[g].emplace_back(step, i, ops[i].kind);
  }
  return out;
}

void expect_complete_timeline(const core::Workload& w, const core::DeviceSpec& d, std::vector<std::uint64_t> ctas) {
  const core::TileProgram program = kernels::make_program(w, d);
  std::vector<core::KernelResult> traced_results, plain_results;
  const std::vector<Seen> seen = trace_run(w, d, ctas, &traced_results);
  ASSERT_FALSE(seen.empty());
  for (std::size_t launch = 0; launch < program.launches.size(); ++launch) {
    for (std::uint64_t cta : ctas) {
      if (cta >= program.launches[launch]->shape().num_ctas()) continue;
      const auto want = emitted(program, launch, cta);
      for (const auto& [group, ops] : want) {
        std::vector<Seen> got;
        for (const Seen& s : seen)
          if (s.launch == launch && s.cta == cta && s.group == group) got.push_back(s);
        ASSERT_EQ(got.size(), ops.size()) << "launch " << launch << " CTA " << cta << " group " << group;
        for (std::size_t i = 0; i < ops.size(); ++i) {
          EXPECT_EQ(std::make_tuple(got[i].step, got[i].op, got[i].kind), ops[i]) << "op " << i;
          EXPECT_LE(got[i].start, got[i].end);
          // A group reaches an op when the one before let it go on (a load held for its load
          // credits spans from then until its last piece left).
          if (i > 0) {
            EXPECT_DOUBLE_EQ(got[i].start, got[i - 1].end) << "op " << i;
          }
        }
      }
    }
  }
  for (const Seen& s : seen) EXPECT_TRUE(std::find(ctas.begin(), ctas.end(), s.cta) != ctas.end()) << s.cta;
  // Observing changes nothing: the same results as an untraced run.
  plain_results = simulate(d, program, EngineOptions{});
  ASSERT_EQ(plain_results.size(), traced_results.size());
  for (std::size_t i = 0; i < plain_results.size(); ++i) {
    EXPECT_EQ(plain_results[i].totals.cycles, traced_results[i].totals.cycles);
    EXPECT_EQ(plain_results[i].totals.stats.events, traced_results[i].totals.stats.events);
  }
}

core::Workload flash(const char* kernel, std::uint64_t seq, std::uint64_t d) {
  core::Workload w = config::workload_for_kernel(kernel, {});
  w.batch = 1;
  w.heads = 2;
  w.kv_heads = 2;
  w.seq_q = w.seq_kv = seq;
  w.head_dim = d;
  return w;
}

TEST(Trace, Flash2CtasReportEveryOpInOrder) {
  expect_complete_timeline(flash("flash2", 1024, 128), config::load_device("h200", {}), {0, 5, 15});
}

TEST(Trace, WarpSpecializedFlash3ReportsEveryGroupsOps) {
  // Producer and consumer groups, mbarrier waits released by other groups' arrivals.
  expect_complete_timeline(flash("flash3", 1024, 128), config::load_device("h100-sxm", {}), {0, 3});
}

TEST(Trace, EveryLaunchOfStandardFwdBwd) {
  core::Workload w = flash("standard", 512, 64);
  w.pass = core::Pass::kFwdBwd;
  w.causal = true;
  expect_complete_timeline(w, config::load_device("h200", {}), {0, 1});
}

TEST(Trace, WarpSpecializedClusterGemms) {
  // standard with gemm_ws on sm_90: producer and consumer groups, 1x2 clusters, multicast TMA.
  core::Workload w = flash("standard", 1024, 128);
  w.gemm_ws = true;
  expect_complete_timeline(w, config::load_device("h200", {}), {0, 1, 6});
}

// sim.mode: sampled: a skipped step is one record without an op, a CTA skipped whole one record;
// with them a CTA's timeline still covers every step, each record starting where the one before
// ended, and the simulated steps report every op of theirs.
TEST(Trace, SampledRunsReportSkippedStepsAndCtas) {
  core::Workload w = flash("flash2", 4096, 128);  // 64 steps per CTA: steps are skipped
  w.heads = 8;
  w.kv_heads = 8;
  w.sim_mode = core::SimMode::kSampled;
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "8"}});  // 16 waves: CTAs skipped whole
  const core::TileProgram program = kernels::make_program(w, d);
  const std::uint64_t ctas = program.launches[0]->shape().num_ctas();
  std::vector<std::uint64_t> all(ctas);
  for (std::uint64_t c = 0; c < ctas; ++c) all[c] = c;
  const std::vector<Seen> seen = trace_run(w, d, all);
  const auto want = emitted(program, 0, 0).at(0);
  const std::uint64_t steps = std::get<0>(want.back()) + 1;
  std::size_t whole = 0, skipped_steps = 0;
  for (std::uint64_t c = 0; c < ctas; ++c) {
    std::vector<Seen> got;
    for (const Seen& s : seen)
      if (s.cta == c) got.push_back(s);
    ASSERT_FALSE(got.empty()) << "CTA " << c;
    if (got[0].skipped == TraceRecord::Skipped::kCta) {
      EXPECT_EQ(got.size(), 1u) << "CTA " << c;
      EXPECT_LT(got[0].start, got[0].end);
      ++whole;
      continue;
    }
    std::vector<bool> step_seen(steps, false);
    for (std::size_t i = 0; i < got.size(); ++i) {
      step_seen.at(got[i].step) = true;
      if (got[i].skipped == TraceRecord::Skipped::kStep) ++skipped_steps;
      if (i > 0) {
        EXPECT_DOUBLE_EQ(got[i].start, got[i - 1].end) << "CTA " << c << " record " << i;
      }
    }
    EXPECT_EQ(std::count(step_seen.begin(), step_seen.end(), true), static_cast<long>(steps)) << "CTA " << c;
  }
  EXPECT_GT(whole, 0u);
  EXPECT_GT(skipped_steps, 0u);
}

TEST(Trace, NothingWithoutCtasOrCallback) {
  const core::Workload w = flash("flash2", 512, 64);
  EXPECT_TRUE(trace_run(w, config::load_device("h200", {}), {}).empty());
  EngineOptions o;
  o.trace_ctas = {0};  // no callback: nothing to call, nothing breaks
  EXPECT_NO_THROW(simulate(config::load_device("h200", {}), kernels::make_program(w, config::load_device("h200", {})), o));
}

}  // namespace
}  // namespace attnsim::engine
