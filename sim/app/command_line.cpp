#include "sim/app/command_line.h"

namespace attnsim::app {

std::string command_line(const std::string& subcommand, const Args& args) {
  std::string out = "attnsim " + subcommand;
  for (const auto& a : args) {
    out += ' ';
    bool quote = a.empty() || a.find_first_of(" \t'\"") != std::string::npos;
    out += quote ? "'" + a + "'" : a;
  }
  return out;
}

}  // namespace attnsim::app
