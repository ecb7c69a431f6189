// The command line a subcommand was started with, for provenance attributes in outputs.
// Reconstructed from the subcommand's name and arguments; quoting is approximate.
#pragma once

#include <string>

#include "sim/app/commands.h"

namespace attnsim::app {

std::string command_line(const std::string& subcommand, const Args& args);

}  // namespace attnsim::app
