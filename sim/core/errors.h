// Error types that cross layer boundaries. main() maps them to exit codes:
// ConfigError -> 2 (bad input), SimError -> 3 (simulation failure). Library code never exits.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace attnsim::core {

// One problem with user input, located as precisely as known.
// Formatted as "file:line: key.path: message" (file/line/key omitted when unknown).
struct ConfigProblem {
  std::string file;
  int line = 0;          // 1-based; 0 = unknown
  std::string key_path;  // e.g. "l2.capacity_bytes" or "--seq"
  std::string message;
  std::string format() const;
};

// Bad input: every problem found, reported at once.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<ConfigProblem> problems);
  explicit ConfigError(ConfigProblem problem);
  const std::vector<ConfigProblem>& problems() const { return problems_; }

 private:
  std::vector<ConfigProblem> problems_;
};

// The simulation itself failed (stuck engine, broken invariant found at run time).
class SimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace attnsim::core
