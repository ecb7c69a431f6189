// Helpers every subcommand uses: parse options with Boost.Program_options, print --help,
// turn option errors into ConfigError naming the flag.
#pragma once

#include <boost/program_options.hpp>
#include <ostream>
#include <string>

#include "sim/app/commands.h"

namespace attnsim::app {

namespace po = boost::program_options;

// Parses `args` into `vm`. Returns false after printing help (when --help was given).
// Throws core::ConfigError (exit 2) for unknown or malformed options, naming the flag.
// `positional` may be null.
bool parse_options(const Args& args, const std::string& usage, po::options_description& desc,
                   po::variables_map& vm, std::ostream& out,
                   const po::positional_options_description* positional = nullptr);

}  // namespace attnsim::app
