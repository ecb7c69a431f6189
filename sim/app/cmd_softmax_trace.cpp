// PLACEHOLDER: replaced by the subcommand's implementation.
#include "sim/app/commands.h"
#include "sim/core/errors.h"

namespace attnsim::app {

int cmd_softmax_trace(const Args&, std::ostream&) { throw core::SimError("'softmax_trace' is not implemented yet"); }

}  // namespace attnsim::app
