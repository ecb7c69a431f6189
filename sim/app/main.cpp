// attnsim entry point: maps the subcommand's result or error to the process exit code.
#include <iostream>
#include <string>
#include <vector>

#include "sim/app/commands.h"
#include "sim/app/sigint_flag.h"

int main(int argc, char** argv) {
  attnsim::app::remove_temporaries_on_signals();  // SIGINT/SIGTERM/SIGHUP leave no "<out>.tmp-<pid>"
  std::vector<std::string> args(argv + 1, argv + argc);
  int rc = attnsim::app::run_cli(args, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}
