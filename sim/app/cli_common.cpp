#include "sim/app/cli_common.h"

#include "sim/core/errors.h"

namespace attnsim::app {

bool parse_options(const Args& args, const std::string& usage, po::options_description& desc,
                   po::variables_map& vm, std::ostream& out,
                   const po::positional_options_description* positional) {
  desc.add_options()("help,h", "show this help and exit");
  try {
    po::command_line_parser parser(args);
    parser.options(desc);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      out << "usage: " << usage << "\n\n" << desc << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw core::ConfigError(core::ConfigProblem{"", 0, "", std::string(e.what()) +
                                                           " (see --help)"});
  }
  return true;
}

}  // namespace attnsim::app
