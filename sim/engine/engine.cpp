// PLACEHOLDER: replaced by the engine implementation.
#include "sim/engine/engine.h"

#include "sim/core/errors.h"

namespace attnsim::engine {

std::vector<core::KernelResult> simulate(const core::DeviceSpec&, const core::TileProgram&,
                                         const EngineOptions&) {
  throw core::SimError("engine not implemented yet");
}

}  // namespace attnsim::engine
