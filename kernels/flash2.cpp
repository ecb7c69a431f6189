// PLACEHOLDER: replaced by the kernel's implementation.
#include "kernels/factories.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

core::TileProgram make_flash2(const core::Workload&, const core::DeviceSpec&) {
  throw core::SimError("kernel 'flash2' is not implemented yet");
}

}  // namespace attnsim::kernels
