// Helpers for tests that run `attnsim sweep`, `merge` or `run` in-process: a scratch directory, a
// results file's point records as one string, and run_cli with its exit code (and output).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/commands.h"
#include "sim/io/h5_results_reader.h"

namespace attnsim::app::sweep_test {

// An empty directory under the test temp dir, named attnsim_<prefix>_<name>.
inline std::string scratch(const std::string& prefix, const std::string& name) {
  const std::filesystem::path d = std::filesystem::path(::testing::TempDir()) / ("attnsim_" + prefix + "_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

// Every point record of a results file, serialized, in index order.
inline std::string records(const std::string& path) {
  std::string s;
  for (const auto& p : io::read_results_h5(path).points) s += io::serialize_point(p);
  return s;
}

// run_cli(argv); its stderr into *err_text when given.
inline int cli(const std::vector<std::string>& argv, std::string* err_text = nullptr) {
  std::ostringstream out, err;
  const int rc = run_cli(argv, out, err);
  if (err_text) *err_text = err.str();
  return rc;
}

// run_cli(argv): its exit code, stdout and stderr.
struct CliResult {
  int code;
  std::string out;
  std::string err;
};
inline CliResult cli_result(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  const int code = run_cli(argv, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace attnsim::app::sweep_test
