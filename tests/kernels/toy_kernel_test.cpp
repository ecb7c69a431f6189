// A toy kernel added by following docs/architecture.md ("Adding a kernel"): a launch, a factory,
// a closed form and a KernelEntry in a registry table of the test's own, run through the engine.
#include <gtest/gtest.h>

#include <memory>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/traffic_counter.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

constexpr std::uint32_t kRows = 8, kRowBytes = 256;  // one CTA's tile: 2 KiB

// toy_copy: CTA i loads rows [8i, 8i+8) of Q (256 B each) and stores them to the same rows of O.
class ToyCopyLaunch : public core::KernelLaunch {
 public:
  explicit ToyCopyLaunch(std::uint64_t ctas) : ctas_(ctas) {}
  std::string name() const override { return "toy_copy"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = ctas_;
    s.threads_per_cta = 128;
    s.smem_dynamic_bytes = kRows * kRowBytes;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    if (step > 0) return false;
    const core::Bytes offset = cta * kRows * kRowBytes;
    core::TileOp load;
    load.kind = core::OpKind::kLoad;
    load.tensor = core::Tensor::kQ;
    load.rows = kRows;
    load.row_bytes = kRowBytes;
    load.row_stride = kRowBytes;
    load.addr = core::tensor_base(core::Tensor::kQ) + offset;
    out.push_back(load);
    core::TileOp store = load;
    store.kind = core::OpKind::kStore;
    store.tensor = core::Tensor::kO;
    store.addr = core::tensor_base(core::Tensor::kO) + offset;
    out.push_back(store);
    return true;
  }

 private:
  std::uint64_t ctas_;
};

// Step 1: the factory resolves defaults on the program's copy of the workload.
core::TileProgram make_toy_copy(const core::Workload& workload, const core::DeviceSpec&) {
  core::TileProgram p;
  p.workload = workload;
  if (p.workload.programs == 0) p.workload.programs = 4;
  p.launches.push_back(std::make_unique<ToyCopyLaunch>(p.workload.programs));
  return p;
}

// Step 2: its closed form (every byte is distinct, so the compulsory bytes are the same).
std::vector<core::LaunchTraffic> toy_copy_traffic(const core::Workload& w, bool /*compulsory*/) {
  core::LaunchTraffic t;
  t.kernel_name = "toy_copy";
  t.traffic[core::Tensor::kQ].read = w.programs * kRows * kRowBytes;
  t.traffic[core::Tensor::kO].write = w.programs * kRows * kRowBytes;
  return {t};
}

// ... and its registry entry, in a table of its own (the built-in one is kernel_registry()).
const std::vector<KernelEntry>& toy_registry() {
  static const std::vector<KernelEntry> table = {
      {"toy_copy", &make_toy_copy, "CTAs copying 2-KiB tiles of Q to O", &toy_copy_traffic, nullptr, nullptr,
       {"programs"}, false, false, {}},
  };
  return table;
}

core::Workload toy_workload(std::uint64_t programs) {
  core::Workload w;
  w.kernel = "toy_copy";
  w.programs = programs;
  return w;
}

TEST(ToyKernel, FactoryIsFoundThroughItsDescriptor) {
  const core::DeviceSpec d = config::load_device("teaching");
  const core::TileProgram p = make_program(toy_workload(0), d, toy_registry());
  EXPECT_EQ(p.workload.programs, 4u);  // the default, resolved by the factory
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.launches[0]->name(), "toy_copy");
  EXPECT_EQ(find_kernel("toy_copy"), nullptr);  // not in the built-in registry
  EXPECT_THROW(make_program(toy_workload(1), d), core::ConfigError);
}

// Step 3: the op stream and the engine (L2 off) move exactly the closed form's bytes.
TEST(ToyKernel, EngineBytesWithL2OffEqualTheClosedForm) {
  const core::DeviceSpec d = config::load_device("teaching", {{"l2.capacity_bytes", "0"}});
  const core::TileProgram p = make_program(toy_workload(37), d, toy_registry());
  const KernelEntry* e = find_kernel(p.workload.kernel, toy_registry());
  ASSERT_NE(e, nullptr);
  const std::vector<core::LaunchTraffic> want = e->closed_form(p.workload, false);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(core::TrafficCounter::count(p)[0].traffic, want[0].traffic);
  const std::vector<core::KernelResult> got = engine::simulate(d, p);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "toy_copy");
  EXPECT_EQ(got[0].tensors.dram, want[0].traffic);
  EXPECT_EQ(got[0].tensors.dram[core::Tensor::kQ].read, 37u * 2048u);
  EXPECT_GT(got[0].totals.time_ns, 0);
}

}  // namespace
}  // namespace attnsim::kernels
