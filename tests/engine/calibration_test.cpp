// h200 preset against tests/data/reference/microbench.json (one machine's measurements).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/factories.h"
#include "microbench_reference.h"
#include "sim/config/device_loader.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"
#include "sim/io/launch_metrics.h"

namespace attnsim::engine {
namespace {

// The named metrics (sim/io names the engine's typed totals), with the derived ones if added.
double metric(const core::KernelResult& r, const char* name) {
  const core::Metrics named = r.metrics.empty() ? io::launch_metrics(r.totals) : r.metrics;
  const core::Metric* m = core::find_metric(named, name);
  return m ? m->value : std::nan("");
}

// The h200 preset's HBM write bandwidth (hbm.write_bandwidth_gbps) is calibrated on
// microbench.json's device-to-device copy (torch copy_ of 2 GiB: 4219 GB/s read + write). The
// engine's stream_copy in the shape of PyTorch's vectorized copy kernel (128 threads, 64 B per
// thread: 262144 CTAs of 8 KiB) must reproduce it within 5 %; with writes at the read
// bandwidth (4800 GB/s) it gives 4802 GB/s (+13.8 %), which the test also checks on 512 MiB.
TEST(Calibration, StreamCopyWithinFivePercentOfH200CopyBandwidth) {
  const core::DeviceSpec h200 = config::load_device("h200");
  core::Workload w;
  w.kernel = "stream_copy";
  w.bytes_per_step = 8192;
  auto gbps = [&](const core::DeviceSpec& d, core::Bytes total) {
    w.total_bytes = total;
    w.programs = total / w.bytes_per_step;  // one 8 KiB step per CTA
    const auto r = simulate(d, kernels::make_stream_copy(w, d));
    return 2.0 * static_cast<double>(total) / metric(r.at(0), "gpu__time_duration.sum");
  };
  const double measured = testing::copy_gbps();
  const double sim = gbps(h200, core::Bytes{2} << 30);
  std::printf("copy 2 GiB: simulated %.0f GB/s, measured %.0f GB/s (%+.1f %%)\n", sim, measured,
              100.0 * (sim / measured - 1));
  EXPECT_NEAR(sim, measured, 0.05 * measured);
  // A quarter of the copy is enough to see it (the last ~60 MiB of writes are written after the
  // kernel either way).
  const core::DeviceSpec same = config::load_device("h200", {{"hbm.write_bandwidth_gbps", "4800"}});
  const double same_rate = gbps(same, core::Bytes{512} << 20);
  EXPECT_GT(same_rate, 1.10 * measured) << "writes at the read bandwidth: the copy is too fast";
}

TEST(Calibration, PointerChaseWithinTenPercentOfH200AtEveryWorkingSet) {
  const core::DeviceSpec h200 = config::load_device("h200");
  const auto points = testing::chase_points();
  ASSERT_EQ(points.size(), 8u);
  for (const auto& p : points) {
    core::Workload w;
    w.kernel = "pointer_chase";
    w.working_set_bytes = static_cast<core::Bytes>(p.working_set_mib * 1024 * 1024);
    const auto results = simulate(h200, kernels::make_pointer_chase(w, h200));
    const double cpl = metric(results.at(0), "attnsim__cycles_per_load");
    std::printf("chase %8.3f MiB: simulated %7.1f measured %7.1f (%+.1f %%)\n", p.working_set_mib, cpl,
                p.cycles_per_load, 100.0 * (cpl / p.cycles_per_load - 1));
    EXPECT_NEAR(cpl, p.cycles_per_load, 0.10 * p.cycles_per_load) << p.working_set_mib << " MiB";
  }
}

// Measured points the model misses by more than 15 %, each with why. This list is part of the
// calibration record (README "Accuracy"; issue 3 stays open while it is not empty): the test
// fails if a point NOT listed here misses, and also if a listed point starts to fit (so the
// list cannot go stale).
struct KnownMiss {
  std::uint64_t programs;
  core::Bytes bytes_per_step;
  const char* why;
};
constexpr KnownMiss kKnownStreamMisses[] = {
    {1, 4096,
     "one CTA at 4 KiB steps measured 12.45 GB/s, while 8, 33 and 66 CTAs at the same step sustain "
     "16.0-16.3 GB/s per CTA and one CTA at 1 KiB / 16 KiB steps 9.4 / 16.7 GB/s; each of those CTAs "
     "has an SM and an idle HBM to itself, so the model (like any per-CTA Little's-law model) gives "
     "them one rate; simulated 14.4 GB/s (+15.6 %)"},
};

bool is_known_miss(std::uint64_t programs, core::Bytes step) {
  for (const auto& m : kKnownStreamMisses)
    if (m.programs == programs && m.bytes_per_step == step) return true;
  return false;
}

TEST(Calibration, StreamReadWithinFifteenPercentOfH200AtEveryPoint) {
  const core::DeviceSpec h200 = config::load_device("h200");
  const auto points = testing::stream_points();
  ASSERT_EQ(points.size(), 33u);
  for (const auto& p : points) {
    core::Workload w;
    w.kernel = "stream_read";
    w.programs = p.programs;
    w.warps = p.warps;
    w.bytes_per_step = p.bytes_per_step;
    // Shortened (the measurement streamed 4 GiB): each CTA reads S steps, S = 64 MiB / (programs x step)
    // clamped to [3, 24], so small grids reach steady state and large ones keep their waves.
    const core::Bytes steps = std::clamp<core::Bytes>((core::Bytes{64} << 20) / (p.programs * p.bytes_per_step), 3, 24);
    w.total_bytes = p.programs * steps * p.bytes_per_step;
    const auto results = simulate(h200, kernels::make_stream_read(w, h200));
    const double read = metric(results.at(0), "dram__bytes_read.sum");
    const double ns = metric(results.at(0), "gpu__time_duration.sum");
    const double gbps = read / ns;
    std::printf("stream %5llu B x %4llu CTAs: simulated %7.1f measured %7.1f GB/s (%+.1f %%)\n",
                static_cast<unsigned long long>(p.bytes_per_step), static_cast<unsigned long long>(p.programs), gbps,
                p.gbps, 100.0 * (gbps / p.gbps - 1));
    const bool within = std::abs(gbps - p.gbps) <= 0.15 * p.gbps;
    if (is_known_miss(p.programs, p.bytes_per_step)) {
      EXPECT_FALSE(within) << p.programs << " CTAs, " << p.bytes_per_step
                           << " B per step now fits: remove it from kKnownStreamMisses";
    } else {
      EXPECT_TRUE(within) << p.programs << " CTAs, " << p.bytes_per_step << " B per step: simulated " << gbps
                          << " GB/s, measured " << p.gbps;
    }
  }
}

}  // namespace
}  // namespace attnsim::engine
