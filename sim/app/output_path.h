// Checks an output path (--out) before any work is done, so a run that cannot write its result
// fails at once with exit 2 instead of after the simulation. Nothing is created here.
#pragma once

#include <string>

namespace attnsim::app {

// Throws core::ConfigError naming `flag` when `path` is a directory, or its directory does not
// exist or is not writable.
void check_output_path(const std::string& path, const std::string& flag);

}  // namespace attnsim::app
