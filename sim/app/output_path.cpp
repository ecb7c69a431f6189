#include "sim/app/output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include "sim/core/errors.h"
#include "sim/io/durable_write.h"
#include "sim/io/output_target.h"

namespace attnsim::app {

void check_output_path(const std::string& path, const std::string& flag) {
  try {
    io::resolve_output(path);
  } catch (const io::OutputError& e) {
    throw core::ConfigError(core::ConfigProblem{"", 0, flag, e.what()});
  }
}

std::ostream& report_stream(const std::string& path, std::ostream& out) {
  if (path.empty()) return out;
  try {
    if (io::resolve_output(path).kind != io::OutputTarget::Kind::kStream) return out;
  } catch (const io::OutputError&) {
    return out;
  }
  struct stat a {}, b {};
  if (::stat(path.c_str(), &a) != 0 || ::fstat(STDOUT_FILENO, &b) != 0) return out;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_rdev == b.st_rdev ? std::cerr : out;
}

}  // namespace attnsim::app
