// A small GPU device for kernel tests, built in code so the tests do not depend on the YAML
// loader: H200-like per-SM limits, 4 SMs, no L2.
#pragma once

#include "sim/core/device_spec.h"

namespace attnsim::kernels::testing {

inline core::DeviceSpec small_gpu() {
  core::DeviceSpec d;
  d.name = "test-gpu";
  d.sm.count = 4;
  d.sm.shared_mem_per_sm_bytes = 233472;
  d.sm.shared_mem_per_block_optin_bytes = 232448;
  d.sm.shared_mem_carveouts_bytes = {0, 8192, 16384, 32768, 65536, 102400, 135168, 167936, 200704, 233472};
  d.sm.l1_shared_total_bytes = 262144;
  return d;
}

}  // namespace attnsim::kernels::testing
