// h200 preset against reference/h200/microbench.json (one machine's measurements).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/factories.h"
#include "microbench_reference.h"
#include "sim/config/device_loader.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"

namespace attnsim::engine {
namespace {

double metric(const core::KernelResult& r, const char* name) {
  const core::Metric* m = core::find_metric(r.metrics, name);
  return m ? m->value : std::nan("");
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
    EXPECT_NEAR(gbps, p.gbps, 0.15 * p.gbps) << p.programs << " CTAs, " << p.bytes_per_step << " B per step";
  }
}

}  // namespace
}  // namespace attnsim::engine
