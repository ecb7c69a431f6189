// PLACEHOLDER: replaced by the kernel's implementation.
#include "kernels/factories.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

core::TileProgram make_stream_read(const core::Workload&, const core::DeviceSpec&) {
  throw core::SimError("kernel 'stream_read' is not implemented yet");
}

}  // namespace attnsim::kernels
