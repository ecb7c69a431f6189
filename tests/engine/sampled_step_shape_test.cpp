// Sampled mode counts a step skipped unwarmed by the shape of the step before it, without emitting
// it, where the kernel names both steps' shape (KernelLaunch::step_shape): the result is the same
// to the bit as when every such step is emitted and its signature compared, and far fewer steps
// are emitted.
#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/engine/engine.h"
#include "sim/engine/sampler.h"

namespace attnsim::engine {
namespace {

// Forwards a launch; counts its emitted steps; names step shapes only if `shapes`.
class Counted : public core::KernelLaunch {
 public:
  Counted(const core::KernelLaunch& inner, bool shapes) : inner_(inner), shapes_(shapes) {}
  std::string name() const override { return inner_.name(); }
  core::LaunchShape shape() const override { return inner_.shape(); }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    ++emitted_;
    return inner_.emit_step(cta, step, out);
  }
  std::vector<core::WarpGroupSpec> warp_groups() const override { return inner_.warp_groups(); }
  bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                       std::vector<core::TileOp>& out) const override {
    ++emitted_;
    return inner_.emit_group_step(cta, group, step, out);
  }
  std::vector<std::uint32_t> mbarriers() const override { return inner_.mbarriers(); }
  std::uint64_t step_shape(std::uint64_t cta, std::uint32_t group, std::uint64_t step) const override {
    return shapes_ ? inner_.step_shape(cta, group, step) : kUnknownStepShape;
  }
  std::uint64_t emitted() const { return emitted_; }

 private:
  const core::KernelLaunch& inner_;
  bool shapes_;
  mutable std::uint64_t emitted_ = 0;
};

TEST(SampledStepShape, StepsCountedByTheirShapeGiveTheSameResultEmittedLess) {
  // 128 waves of 16 CTAs of 2048 steps on an h200 cut to 8 SMs and a 4 MiB L2: the span of CTAs
  // skipped whole runs to the launch's end, the CTAs beside it fast-forward and the reference waves
  // extrapolate the middle of their runs (the small L2 keeps the warmed tail of each run short),
  // all skipping steps unwarmed: 62,896 steps emitted with shapes, 172,208 without (2026-12-06).
  const core::DeviceSpec d = config::load_device("h200", {{"sm.count", "8"}, {"l2.capacity_bytes", "4194304"}});
  const core::Workload w = config::workload_for_kernel(
      "flash2", {{"batch", "1"}, {"heads", "2"}, {"seq", "131072"}, {"head_dim", "128"}});
  const core::TileProgram inner = kernels::make_program(w, d);
  ASSERT_GE(inner.launches.at(0)->shape().grid_x * 8 / 16, Sampler::kEndSpanWaves) << "no longer a long launch";
  EngineOptions o;
  o.sampled = true;
  std::vector<core::KernelResult> r;
  std::vector<std::uint64_t> emitted;
  for (const bool shapes : {false, true}) {
    core::TileProgram p;
    p.workload = inner.workload;
    p.launches.push_back(std::make_unique<Counted>(*inner.launches[0], shapes));
    r.push_back(simulate(d, p, o).at(0));
    emitted.push_back(static_cast<const Counted&>(*p.launches[0]).emitted());
  }
  ASSERT_GT(r[0].totals.ctas_skipped, 0u) << "no CTA skipped whole: the case tests nothing";
  ASSERT_GT(r[0].totals.ctas_fast_forwarded, 0u);
  EXPECT_EQ(r[1].totals.time_ns, r[0].totals.time_ns);  // to the bit
  EXPECT_EQ(r[1].totals.dram_read, r[0].totals.dram_read);
  EXPECT_EQ(r[1].totals.dram_write, r[0].totals.dram_write);
  EXPECT_EQ(r[1].totals.memory.lts_bytes, r[0].totals.memory.lts_bytes);
  EXPECT_EQ(r[1].totals.stats.flops, r[0].totals.stats.flops);
  EXPECT_EQ(r[1].totals.stats.lsu_bytes, r[0].totals.stats.lsu_bytes);
  EXPECT_EQ(r[1].totals.sampled_fraction, r[0].totals.sampled_fraction);
  EXPECT_EQ(r[1].totals.sampling_error, r[0].totals.sampling_error);
  EXPECT_LT(static_cast<double>(emitted[1]), 0.5 * static_cast<double>(emitted[0]))
      << emitted[1] << " steps emitted with shapes, " << emitted[0] << " without";
}

}  // namespace
}  // namespace attnsim::engine
