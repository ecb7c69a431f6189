#include <boost/program_options/errors.hpp>
#include <iostream>

#include "sim/app/commands.h"
#include "sim/core/errors.h"

namespace attnsim::app {

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = {
      {"formulas", &cmd_formulas, "closed-form byte counts: score matrix, tiles, standard vs tiled traffic"},
      {"softmax-trace", &cmd_softmax_trace, "walk the online softmax block by block"},
      {"occupancy", &cmd_occupancy, "CUDA occupancy rules for a block shape on a device"},
      {"run", &cmd_run, "simulate one workload on a device"},
      {"sweep", &cmd_sweep, "run a YAML sweep into an HDF5 file (--dry-run: list its points and their cost)"},
      {"merge", &cmd_merge, "merge sharded sweep outputs into one HDF5 file"},
      {"check", &cmd_check, "simulated traffic vs closed forms; exit 1 on mismatch"},
      {"compare", &cmd_compare, "error table of simulated vs measured (Nsight Compute) metrics"},
  };
  return table;
}

namespace {
void print_usage(std::ostream& out) {
  out << "attnsim: a cycle-approximate simulator of GPU memory hierarchies running attention kernels\n\n"
         "usage: attnsim <command> [options]   (attnsim <command> --help for its options)\n\n"
         "commands:\n";
  for (const auto& c : command_table()) {
    std::string name = c.name;
    name.resize(15, ' ');
    out << "  " << name << c.summary << "\n";
  }
  out << "\nexit codes: 0 ok, 1 a check found a mismatch, 2 bad input, 3 simulation error\n";
}
}  // namespace

int report_error(std::ostream& err, const std::string& command, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const core::ConfigError& e) {
    err << "attnsim " << command << ": error: " << e.what() << "\n";
    return 2;
  } catch (const core::SimError& e) {
    err << "attnsim " << command << ": simulation error: " << e.what() << "\n";
    return 3;
  } catch (const boost::program_options::error& e) {
    err << "attnsim " << command << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "attnsim " << command << ": internal error: " << e.what() << "\n";
    return 3;
  }
}

int run_cli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    print_usage(out);
    return 0;
  }
  if (argv[0] == "--version") {
    out << "attnsim 0.1.0\n";
    return 0;
  }
  const Command* cmd = nullptr;
  for (const auto& c : command_table())
    if (argv[0] == c.name) cmd = &c;
  if (!cmd) {
    err << "attnsim: unknown command '" << argv[0] << "'\n";
    print_usage(err);
    return 2;
  }
  Args rest(argv.begin() + 1, argv.end());
  try {
    return cmd->run(rest, out);
  } catch (...) {
    return report_error(err, cmd->name, std::current_exception());
  }
}

}  // namespace attnsim::app
