// The attnsim subcommands. Each parses its own arguments (Boost.Program_options), writes its
// report to `out`, and returns the exit code; errors are thrown (ConfigError -> 2, SimError -> 3)
// and mapped to exit codes by main().
#pragma once

#include <exception>
#include <ostream>
#include <string>
#include <vector>

namespace attnsim::app {

using Args = std::vector<std::string>;  // arguments after the subcommand name

int cmd_formulas(const Args& args, std::ostream& out);
int cmd_softmax_trace(const Args& args, std::ostream& out);
int cmd_occupancy(const Args& args, std::ostream& out);
int cmd_run(const Args& args, std::ostream& out);
int cmd_sweep(const Args& args, std::ostream& out);
int cmd_merge(const Args& args, std::ostream& out);
int cmd_check(const Args& args, std::ostream& out);
int cmd_compare(const Args& args, std::ostream& out);

struct Command {
  const char* name;
  int (*run)(const Args&, std::ostream&);
  const char* summary;
};
const std::vector<Command>& command_table();

// Writes the line run_cli prints for a subcommand's exception ("attnsim COMMAND: error: ...") and
// returns its exit code (ConfigError and option errors 2, SimError and others 3). Rethrows what
// is not a std::exception.
int report_error(std::ostream& err, const std::string& command, std::exception_ptr error);

// Runs `attnsim <argv...>` in-process and returns the exit code (used by main and by tests).
int run_cli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace attnsim::app
