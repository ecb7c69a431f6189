#include "sim/core/errors.h"

#include <sstream>

namespace attnsim::core {

std::string ConfigProblem::format() const {
  std::ostringstream out;
  if (!file.empty()) {
    out << file;
    if (line > 0) out << ':' << line;
    out << ": ";
  }
  if (!key_path.empty()) out << key_path << ": ";
  out << message;
  return out.str();
}

namespace {
std::string join(const std::vector<ConfigProblem>& problems) {
  std::ostringstream out;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (i) out << '\n';
    out << problems[i].format();
  }
  return out.str();
}
}  // namespace

ConfigError::ConfigError(std::vector<ConfigProblem> problems)
    : std::runtime_error(join(problems)), problems_(std::move(problems)) {}

ConfigError::ConfigError(ConfigProblem problem)
    : ConfigError(std::vector<ConfigProblem>{std::move(problem)}) {}

}  // namespace attnsim::core
