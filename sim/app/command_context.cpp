// The thread-local CommandContext of commands run in-process (command_context.h).
#include "sim/app/command_context.h"

namespace attnsim::app {

namespace {
thread_local CommandContext t_context;
}  // namespace

const CommandContext& command_context() { return t_context; }

ScopedCommandContext::ScopedCommandContext(const CommandContext& context) : previous_(t_context) {
  t_context = context;
}

ScopedCommandContext::~ScopedCommandContext() { t_context = previous_; }

}  // namespace attnsim::app
