// PLACEHOLDER: replaced by the kernel's implementation.
#include "kernels/factories.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

core::TileProgram make_flash_decode(const core::Workload&, const core::DeviceSpec&) {
  throw core::SimError("kernel 'flash_decode' is not implemented yet");
}

}  // namespace attnsim::kernels
