// PLACEHOLDER: replaced by the kernel's implementation.
#include "kernels/factories.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

core::TileProgram make_pointer_chase(const core::Workload&, const core::DeviceSpec&) {
  throw core::SimError("kernel 'pointer_chase' is not implemented yet");
}

}  // namespace attnsim::kernels
