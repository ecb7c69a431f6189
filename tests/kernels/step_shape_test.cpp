// KernelLaunch::step_shape: two steps of a CTA's warp group with the same known key emit the same
// ops in every field but `addr` (so sampled mode may count the second by the first's shape without
// emitting it), and a known key names a step that exists. Checked for flash2's forward over its
// three loop schedules (FA-2's two-stage one, the cp.async pipeline, Triton's TMA ring), causal
// and not, ragged blocks, decode, Triton's two causal loops and two warp groups.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"

namespace attnsim::kernels {
namespace {

using core::KernelLaunch;
using core::TileOp;

bool same_but_addr(const TileOp& a, const TileOp& b) {
  TileOp x = a, y = b;
  x.addr = y.addr = 0;
  return std::memcmp(&x, &y, sizeof(TileOp)) == 0;
}

struct Found {
  std::uint64_t known = 0, equal_pairs = 0;
};

// Every CTA in `ctas`, every group, every step up to two past the last: the contract holds.
void check(const KernelLaunch& launch, const std::vector<std::uint64_t>& ctas, const std::string& what, Found& f) {
  const std::uint32_t groups = static_cast<std::uint32_t>(launch.warp_groups().size());
  std::vector<TileOp> prev, cur;
  for (const std::uint64_t cta : ctas)
    for (std::uint32_t g = 0; g < groups; ++g) {
      std::uint64_t prev_key = KernelLaunch::kUnknownStepShape;
      for (std::uint64_t step = 0;; ++step) {
        cur.clear();
        const bool exists = launch.emit_group_step(cta, g, step, cur);
        const std::uint64_t key = launch.step_shape(cta, g, step);
        if (key != KernelLaunch::kUnknownStepShape) {
          ++f.known;
          ASSERT_TRUE(exists) << what << ": CTA " << cta << " group " << g << " step " << step
                              << " has a known shape but no ops";
          if (key == prev_key) {
            ++f.equal_pairs;
            ASSERT_EQ(cur.size(), prev.size()) << what << ": CTA " << cta << " step " << step;
            for (std::size_t i = 0; i < cur.size(); ++i)
              ASSERT_TRUE(same_but_addr(cur[i], prev[i])) << what << ": CTA " << cta << " group " << g << " step "
                                                          << step << " op " << i << " differs from step " << step - 1;
          }
        }
        if (!exists) break;
        prev_key = key;
        prev.swap(cur);
      }
    }
}

TEST(StepShape, EqualKeysMeanEqualOpsButTheirAddresses) {
  Found f;
  for (const char* device : {"h200", "a100-80gb"}) {
    const core::DeviceSpec dev = config::load_device(device, {});
    for (const char* impl : {"fa2", "triton"})
      for (const char* stages : {"1", "2", "3", "4"})
        for (const char* causal : {"false", "true"})
          for (const char* shape : {"seq=640", "seq_q=300,seq_kv=1000", "seq_q=1,seq_kv=1000"})
            for (const char* tma : {"false", "true"}) {
              if (std::string(tma) == "true" && (std::string(impl) != "triton" || std::string(device) != "h200")) continue;
              std::vector<config::Override> sets = {{"batch", "1"}, {"heads", "2"}, {"head_dim", "64"}, {"impl", impl},
                                                    {"stages", stages}, {"causal", causal}, {"block_n", "64"},
                                                    {"tma", tma}};
              if (std::string(impl) == "triton") sets.push_back({"warps", "8"});  // two warp groups on sm_90
              const std::string s(shape);
              for (std::size_t at = 0; at < s.size();) {
                const std::size_t comma = s.find(',', at), eq = s.find('=', at);
                const std::size_t end = comma == std::string::npos ? s.size() : comma;
                sets.push_back({s.substr(at, eq - at), s.substr(eq + 1, end - eq - 1)});
                at = end + 1;
              }
              const std::string what = std::string(device) + " " + impl + " stages " + stages + " causal " + causal +
                                       " " + shape + " tma " + tma;
              core::TileProgram p;
              try {
                p = make_program(config::workload_for_kernel("flash2", sets), dev);
              } catch (const std::exception&) {
                continue;  // a combination the kernel refuses (e.g. a tile that does not fit)
              }
              const KernelLaunch& launch = *p.launches.at(0);
              const std::uint64_t n = launch.shape().grid_x * launch.shape().grid_y * launch.shape().grid_z;
              check(launch, {0, n / 2, n - 1}, what, f);
              if (::testing::Test::HasFatalFailure()) return;
            }
  }
  EXPECT_GT(f.known, 1000u) << "flash2 names almost no step shape: sampled mode emits every skipped step";
  EXPECT_GT(f.equal_pairs, 500u);
}

// The default names no shape, so a kernel that does not implement step_shape is always emitted.
TEST(StepShape, UnknownByDefault) {
  const core::DeviceSpec dev = config::load_device("h200", {});
  const core::TileProgram p = make_program(config::workload_for_kernel("standard", {{"seq", "256"}}), dev);
  for (const auto& launch : p.launches)
    for (std::uint64_t step = 0; step < 4; ++step) EXPECT_EQ(launch->step_shape(0, 0, step), KernelLaunch::kUnknownStepShape);
}

}  // namespace
}  // namespace attnsim::kernels
