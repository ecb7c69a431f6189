// For kernel tests: simulate a workload with the engine and expect every launch's HBM bytes per
// tensor to equal the kernel's closed form (use a device with the L2 off).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/registry.h"
#include "sim/core/io_counts.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels::testing {

// Returns the engine's results; `what` names the case in failure messages.
inline std::vector<core::KernelResult> expect_closed_form_bytes(const core::DeviceSpec& dev, const core::Workload& w,
                                                                const std::string& what) {
  const core::TileProgram p = make_program(w, dev);
  const auto got = engine::simulate(dev, p);
  const auto want = kernels::closed_form_traffic(p.workload);
  EXPECT_EQ(got.size(), want.size()) << what;
  for (std::size_t l = 0; l < got.size() && l < want.size(); ++l)
    for (std::size_t t = 0; t < core::kNumTensors; ++t)
      EXPECT_EQ(got[l].tensors.dram.by_tensor[t], want[l].traffic.by_tensor[t])
          << what << ": " << want[l].kernel_name << " " << core::to_string(static_cast<core::Tensor>(t));
  return got;
}

}  // namespace attnsim::kernels::testing
