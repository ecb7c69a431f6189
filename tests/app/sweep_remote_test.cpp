#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "sim/app/mpi_sweep_protocol.h"
#include "sim/app/remote_point_pool.h"
#include "sim/app/sweep_runner.h"
#include "sim/config/sweep_loader.h"
#include "sim/core/errors.h"
#include "sim/io/h5_results_reader.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

const std::string kSweep =
    "device: teaching\nbase:\n  kernel: flash2\n  seq: 256\n  head_dim: 32\n"
    "axes:\n  block_m: [32, 64]\n  block_n: [16, 32, 64]\nconstraints:\n  - block_n <= block_m\n";

core::RunResult fake(const core::Workload& w, const core::DeviceSpec& d) {
  core::RunResult r;
  r.workload = w;
  r.device_name = d.name;
  core::KernelResult k;
  k.name = "fake";
  k.metrics = {{"dram__bytes_read.sum", static_cast<double>(w.block_m * 1000 + w.block_n) / 3.0}};
  r.kernels = {k};
  r.metrics = k.metrics;
  return r;
}

// A stand-in for the MPI worker ranks: one "worker" that takes a point per serve() and returns it
// (through the exact text encoding the ranks use) on the next serve().
class FakeRemote : public RemotePointPool {
 public:
  explicit FakeRemote(const config::SweepSpec& spec) : expander_(spec) {}
  void announce(int code) override { announced.push_back(code); }
  bool serve(const Take& take, const Done& done) override {
    bool any = false;
    if (!held_.empty()) {
      ReadyMessage m;
      for (auto i : held_) m.records.push_back(run_sweep_point(expander_.point(i), fake));
      held_.clear();
      for (auto& r : decode_ready(encode_ready(m)).records) done(std::move(r));
      any = true;
    }
    if (fail_after >= 0 && ran >= fail_after) {
      failure_ = "rank 1: point exploded";
      return any;
    }
    if (take_limit >= 0 && ran >= take_limit) return any;
    held_ = take(ask);
    largest_batch = std::max(largest_batch, held_.size());
    ran += static_cast<int>(held_.size());
    return any || !held_.empty();
  }
  bool idle() const override { return held_.empty(); }
  std::size_t workers() const override { return 1; }
  const std::string& failure() const override { return failure_; }
  void stop(int code, const Done& done) override {
    const Take none = [](std::size_t) { return std::vector<std::uint64_t>{}; };
    while (!held_.empty()) serve(none, done);
    stopped_with = code;
  }

  std::vector<int> announced;
  int stopped_with = -1;
  int ran = 0;
  int fail_after = -1;
  int take_limit = -1;  // points it takes at most (-1: no limit)
  std::size_t ask = 1;  // batch it asks for
  std::size_t largest_batch = 0;

 private:
  config::SweepExpander expander_;
  std::vector<std::uint64_t> held_;
  std::string failure_;
};

std::string scratch(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnsim_remote_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string table_text(const std::string& path) {
  const io::ResultsFile f = io::read_results_h5(path);
  std::ostringstream s;
  for (const auto& c : f.table) {
    s << c.name << ":";
    for (const auto& v : c.cells) s << " " << io::cell_to_string(v);
    s << "\n";
  }
  for (const auto& p : f.points) s << io::serialize_point(p);
  return s.str();
}

SweepRunOptions options(const std::string& out, RemotePointPool* remote, const std::atomic<bool>* interrupt = nullptr,
                        bool resume = false) {
  SweepRunOptions o;
  o.out_path = out;
  o.jobs = 1;
  o.remote = remote;
  o.interrupt = interrupt;
  o.resume = resume;
  o.command_line = "test";
  return o;
}

TEST(SweepRemote, RemoteWorkersGiveTheLocalTable) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string dir = scratch("same");
  SweepRunner(spec, options(dir + "/local.h5", nullptr), fake).run();
  FakeRemote remote(spec);
  auto slow = [](const core::Workload& w, const core::DeviceSpec& d) {  // leaves points for the remote
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return fake(w, d);
  };
  SweepRunner(spec, options(dir + "/remote.h5", &remote), slow).run();
  EXPECT_GT(remote.ran, 0);
  EXPECT_EQ(table_text(dir + "/local.h5"), table_text(dir + "/remote.h5"));
}

TEST(SweepRemote, WorkersAreToldToStartThenStoppedWithZero) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  FakeRemote remote(spec);
  SweepRunner(spec, options(scratch("codes") + "/r.h5", &remote), fake).run();
  EXPECT_EQ(remote.announced, std::vector<int>{0});
  EXPECT_EQ(remote.stopped_with, 0);
}

TEST(SweepRemote, LeftoverJournalWithoutResumeTellsWorkersExitTwo) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string out = scratch("refuse") + "/r.h5";
  fs::create_directories(out + ".partial");
  FakeRemote remote(spec);
  EXPECT_THROW(SweepRunner(spec, options(out, &remote), fake).run(), core::ConfigError);
  EXPECT_EQ(remote.announced, std::vector<int>{2});
}

TEST(SweepRemote, WorkerFailureStopsTheSweepWithExitThree) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string out = scratch("fail") + "/r.h5";
  FakeRemote remote(spec);
  remote.fail_after = 1;
  auto slow = [](const core::Workload& w, const core::DeviceSpec& d) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return fake(w, d);
  };
  EXPECT_THROW(SweepRunner(spec, options(out, &remote), slow).run(), core::SimError);
  EXPECT_EQ(remote.stopped_with, 3);
  EXPECT_TRUE(fs::exists(out + ".partial"));
}

TEST(SweepRemote, InterruptJournalsPointsInFlightAndResumeCompletes) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string dir = scratch("interrupt");
  SweepRunner(spec, options(dir + "/full.h5", nullptr), fake).run();
  std::atomic<bool> interrupt{false};
  int calls = 0;
  auto interrupting = [&](const core::Workload& w, const core::DeviceSpec& d) {
    if (++calls == 2) interrupt = true;  // "Ctrl-C" while the second local point runs
    return fake(w, d);
  };
  FakeRemote remote(spec);
  remote.take_limit = 1;  // so that points are left when the local thread sees the interrupt
  EXPECT_THROW(SweepRunner(spec, options(dir + "/r.h5", &remote, &interrupt), interrupting).run(), SweepInterrupted);
  EXPECT_EQ(remote.stopped_with, 130);
  const io::ResultsFile snapshot = io::read_results_h5(dir + "/r.h5");
  EXPECT_FALSE(snapshot.complete);
  EXPECT_GE(snapshot.points.size(), 2u);  // both local points in flight and the remote one are kept
  EXPECT_LT(snapshot.points.size(), 6u);
  const SweepSummary s = SweepRunner(spec, options(dir + "/r.h5", nullptr, nullptr, true), fake).run();
  EXPECT_EQ(s.resumed, snapshot.points.size());
  EXPECT_EQ(table_text(dir + "/full.h5"), table_text(dir + "/r.h5"));
}

TEST(SweepRemote, BatchIsCappedByWhatRemains) {
  const config::SweepSpec spec = config::SweepLoader::load_text(kSweep, "s.yaml");
  const std::string dir = scratch("batch");
  SweepRunner(spec, options(dir + "/local.h5", nullptr), fake).run();
  FakeRemote remote(spec);
  remote.ask = 64;
  auto slow = [](const core::Workload& w, const core::DeviceSpec& d) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return fake(w, d);
  };
  SweepRunner(spec, options(dir + "/remote.h5", &remote), slow).run();
  // 6 points, 2 takers (1 thread + 1 remote): at most 6 / (2 * 2) = 1 point per batch.
  EXPECT_EQ(remote.largest_batch, 1u);
  EXPECT_EQ(table_text(dir + "/local.h5"), table_text(dir + "/remote.h5"));
}

TEST(MpiSweepProtocol, ReadyMessageRoundTripsRecordsExactly) {
  io::PointRecord a;
  a.index = 7;
  a.params = {{"block_m", io::Cell{std::int64_t{64}}}};
  a.config_yaml = "kernel: flash2\n";
  core::RunResult r;
  r.metrics = {{"gpu__time_duration.sum", 0.1 + 0.2}};
  a.result = r;
  io::PointRecord b;
  b.index = 9;
  b.status = io::kStatusImpossible;
  b.reason = "block_n <= block_m\nfailed";
  const ReadyMessage back = decode_ready(encode_ready(ReadyMessage{0.25, {a, b}}));
  EXPECT_EQ(back.compute_seconds, 0.25);
  ASSERT_EQ(back.records.size(), 2u);
  EXPECT_EQ(io::serialize_point(back.records[0]), io::serialize_point(a));
  EXPECT_EQ(io::serialize_point(back.records[1]), io::serialize_point(b));
}

TEST(MpiSweepProtocol, TruncatedReadyMessageIsRejected) {
  io::PointRecord a;
  a.index = 1;
  const std::string text = encode_ready(ReadyMessage{0, {a}});
  EXPECT_THROW(decode_ready(text.substr(0, text.size() - 3)), std::runtime_error);
}

TEST(MpiSweepProtocol, IndicesRoundTrip) {
  const std::vector<std::uint64_t> v = {0, 5, 18446744073709551615ull};
  EXPECT_EQ(decode_indices(encode_indices(v)), v);
}

}  // namespace
}  // namespace attnsim::app
