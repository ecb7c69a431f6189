#include "sim/app/output_path.h"

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

}  // namespace attnsim::app
