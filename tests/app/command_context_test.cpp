// Commands run in-process stop when their CommandContext's flag is set (the Python module's Ctrl-C),
// and the context is per thread and restored when its scope ends.
#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "sim/app/command_context.h"
#include "sim/app/commands.h"
#include "sim/app/run_pipeline.h"
#include "sim/config/config.h"

namespace attnsim::app {
namespace {

TEST(CommandContext, IsPerThreadAndRestoredAtTheEndOfItsScope) {
  std::atomic<bool> stop{true};
  std::ostringstream progress;
  EXPECT_EQ(command_context().interrupt, nullptr);
  {
    const ScopedCommandContext scope(CommandContext{&stop, &progress, true});
    EXPECT_EQ(command_context().interrupt, &stop);
    EXPECT_EQ(command_context().progress, &progress);
    EXPECT_THROW(throw_if_interrupted(), Interrupted);
    const std::atomic<bool>* other = &stop;
    std::thread([&other] { other = command_context().interrupt; }).join();
    EXPECT_EQ(other, nullptr);
  }
  EXPECT_EQ(command_context().interrupt, nullptr);
  EXPECT_NO_THROW(throw_if_interrupted());
}

TEST(CommandContext, SetFlagStopsCheckOnEveryThread) {
  std::atomic<bool> stop{false};
  const ScopedCommandContext scope(CommandContext{&stop, nullptr, false});
  std::ostringstream out;
  EXPECT_EQ(cmd_check({"--device", "teaching", "-j", "2", "--no-functional"}, out), 0);  // not set: as ever
  stop = true;
  std::ostringstream out2;
  EXPECT_THROW(cmd_check({"--device", "teaching", "-j", "2"}, out2), Interrupted);
  EXPECT_EQ(out2.str(), "");
}

TEST(CommandContext, SetFlagStopsRun) {
  std::atomic<bool> stop{true};
  const ScopedCommandContext scope(CommandContext{&stop, nullptr, false});
  std::ostringstream out;
  EXPECT_THROW(cmd_run({"--device", "teaching", "--kernel", "flash2", "--set", "seq=256", "--json"}, out), Interrupted);
  EXPECT_EQ(out.str(), "");
}

TEST(RunWorkload, InterruptFlagStopsTheEngineAndFunctionalMode) {
  const core::DeviceSpec device = config::load_device("teaching");
  core::Workload w = config::workload_for_kernel("flash2", {{"seq", "256"}, {"head_dim", "32"}, {"functional", "true"}});
  std::atomic<bool> stop{false};
  RunOptions options;
  options.interrupt = &stop;
  const core::RunResult done = run_workload(w, device, options);  // not set: the same result
  const core::RunResult plain = run_workload(w, device);
  for (const char* m : {"dram__bytes_read.sum", "gpu__time_duration.sum"})
    EXPECT_EQ(core::find_metric(done.metrics, m)->value, core::find_metric(plain.metrics, m)->value) << m;
  ASSERT_TRUE(done.functional_max_rel_error.has_value());
  // Set by the engine's last progress report: functional mode (after it) stops at its first row.
  int reports = 0;
  options.engine.progress = [&](const engine::LaunchProgress& p) {
    ++reports;
    if (p.done) stop = true;
  };
  EXPECT_THROW(run_workload(w, device, options), Interrupted);
  EXPECT_GT(reports, 0);
  stop = true;
  options.engine.progress = nullptr;
  EXPECT_THROW(run_workload(w, device, options), Interrupted);
}

// The workload's sim.min_ops reaches the engine: a small launch (stream_read with one CTA of 256
// steps) runs in full by default and is sampled with sim.min_ops: 0.
TEST(RunWorkload, SimMinOpsReachesTheEngine) {
  const core::DeviceSpec device = config::load_device("h200");
  const std::vector<config::Override> small = {
      {"programs", "1"}, {"bytes_per_step", "4096"}, {"total_bytes", "1048576"}, {"sim.mode", "sampled"}};
  auto fraction = [&](std::vector<config::Override> sets) {
    const core::RunResult r = run_workload(config::workload_for_kernel("stream_read", sets), device);
    return core::find_metric(r.metrics, "attnsim__sampled_fraction")->value;
  };
  EXPECT_EQ(fraction(small), 1.0);
  std::vector<config::Override> all = small;
  all.push_back({"sim.min_ops", "0"});
  EXPECT_LT(fraction(all), 0.5);
}

}  // namespace
}  // namespace attnsim::app
