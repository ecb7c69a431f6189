#include "sim/config/input_file.h"

#include <filesystem>
#include <fstream>

#include "sim/core/errors.h"

namespace attnsim::config {

void require_readable_file(const std::string& path, const std::string& key, const std::string& what) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  std::string problem;
  if (ec == std::errc::not_a_directory) {
    problem = what + " not found: a part of the path before the file name is a file, not a directory";
  } else if (ec || !std::filesystem::exists(status)) {
    problem = what + " not found";
  } else if (std::filesystem::is_directory(status)) {
    problem = what + " is a directory, not a file";
  } else if (!std::ifstream(path)) {
    problem = what + " cannot be opened for reading";
  }
  if (!problem.empty()) throw core::ConfigError(core::ConfigProblem{path, 0, key, problem});
}

}  // namespace attnsim::config
