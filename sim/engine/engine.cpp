#include "sim/engine/engine.h"

#include "sim/engine/launch_simulator.h"

namespace attnsim::engine {

std::vector<core::KernelResult> simulate(const core::DeviceSpec& device, const core::TileProgram& program,
                                         const EngineOptions& options) {
  std::vector<core::KernelResult> out;
  out.reserve(program.launches.size());
  for (const auto& launch : program.launches) {
    // Each launch starts with a cold L2: the previous one was written back and invalidated.
    LaunchSimulator sim(device, *launch, program.workload, options);
    out.push_back(sim.run());
  }
  return out;
}

}  // namespace attnsim::engine
