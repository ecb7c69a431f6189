// The SM's pipe rates from the device spec.
#include "sim/engine/sm.h"

#include <algorithm>

namespace attnsim::engine {

Sm Sm::from_spec(const core::DeviceSpec& device) {
  Sm proto;
  proto.lsu = BandwidthServer(device.sm.load_bytes_per_cycle > 0 ? device.sm.load_bytes_per_cycle : 1e30);
  // The tensor pipe runs at its own (lower) boost clock where the device names one.
  const double tensor_clock = device.sm.tensor_clock_ghz > 0 ? device.sm.tensor_clock_ghz / device.clock_ghz : 1.0;
  proto.tensor = BandwidthServer(device.sm.tensor_flops_per_cycle > 0 ? device.sm.tensor_flops_per_cycle * tensor_clock : 1e30);
  // FP32 instructions: an FMA is one instruction and two FLOP, so the pipe issues
  // fp32_flops_per_cycle / 2 thread instructions per cycle (128 on sm_80/sm_90: CUDA C++
  // Programming Guide, arithmetic instruction throughput, 32-bit add/multiply/FMA).
  proto.fp32 = BandwidthServer(device.sm.fp32_flops_per_cycle > 0 ? device.sm.fp32_flops_per_cycle / 2 : 1e30);
  proto.sfu = BandwidthServer(device.sm.exp_per_cycle > 0 ? device.sm.exp_per_cycle : 1e30);
  proto.smem = BandwidthServer(1.0);  // one wavefront per cycle
  // One warp instruction per scheduler per cycle, counted in thread instructions.
  proto.issue = BandwidthServer(static_cast<double>(std::max(1u, device.sm.schedulers_per_sm)) *
                                std::max(1u, device.sm.warp_size));
  return proto;
}

}  // namespace attnsim::engine
