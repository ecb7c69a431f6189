// PLACEHOLDER: replaced by the subcommand's implementation.
#include "sim/app/commands.h"
#include "sim/core/errors.h"

namespace attnsim::app {

int cmd_occupancy(const Args&, std::ostream&) { throw core::SimError("'occupancy' is not implemented yet"); }

}  // namespace attnsim::app
