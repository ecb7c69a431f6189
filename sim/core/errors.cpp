#include "sim/core/errors.h"

namespace attnsim::core {

std::string ConfigProblem::format() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += ":" + std::to_string(line);
    out += ": ";
  }
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  return out;
}

namespace {
std::string join(const std::vector<ConfigProblem>& problems) {
  std::string out;
  for (const auto& p : problems) {
    if (!out.empty()) out += "\n";
    out += p.format();
  }
  return out;
}
}  // namespace

ConfigError::ConfigError(std::vector<ConfigProblem> problems)
    : std::runtime_error(join(problems)), problems_(std::move(problems)) {}

ConfigError::ConfigError(ConfigProblem problem)
    : ConfigError(std::vector<ConfigProblem>{std::move(problem)}) {}

}  // namespace attnsim::core
