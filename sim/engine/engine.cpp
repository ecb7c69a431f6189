// Engine entry point: builds one launch simulator per launch for the device's memory kind and runs the program's launches in order.
#include "sim/engine/engine.h"

#include "sim/engine/launch_simulator.h"

namespace attnsim::engine {

std::vector<core::KernelResult> simulate(const core::DeviceSpec& device, const core::TileProgram& program,
                                         const EngineOptions& options) {
  std::vector<core::KernelResult> out;
  out.reserve(program.launches.size());
  EngineOptions each = options;
  core::Bytes carried = 0;  // the previous launch's final write-back (l2.carry_writeback)
  for (std::size_t i = 0; i < program.launches.size(); ++i) {
    if (options.progress) {
      each.progress = [&options, i, n = program.launches.size()](const LaunchProgress& p) {
        LaunchProgress q = p;
        q.launch = i;
        q.launches = n;
        options.progress(q);
      };
    }
    if (options.trace) {
      each.trace = [&options, i](const TraceRecord& r) {
        TraceRecord q = r;
        q.launch = i;
        options.trace(q);
      };
    }
    // Each launch starts with a cold L2: the previous one was written back and invalidated; with
    // l2.carry_writeback that write-back occupies this launch's HBM channels first. The memory
    // class is chosen here, once: no per-access device branch.
    if (device.kind == core::DeviceKind::kScratchpad) {
      LaunchSimulator<ScratchpadMemory> sim(device, *program.launches[i], each);
      out.push_back(sim.run());
    } else {
      LaunchSimulator<MemorySystem> sim(device, *program.launches[i], each);
      if (device.l2.carry_writeback) sim.queue_writes(carried);
      out.push_back(sim.run());
      carried = sim.final_writeback();
    }
  }
  return out;
}

}  // namespace attnsim::engine
