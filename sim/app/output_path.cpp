#include "sim/app/output_path.h"

#include <unistd.h>

#include <filesystem>

#include "sim/core/errors.h"

namespace attnsim::app {

void check_output_path(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& why) { throw core::ConfigError(core::ConfigProblem{"", 0, flag, path + ": " + why}); };
  if (path.empty()) fail("empty output path");
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail("is a directory; give a file name such as " + (fs::path(path) / "out.h5").string());
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) {
    // A file where a directory should be ("f/out.h5" with f a file) is not a missing directory.
    for (fs::path up = dir; !up.empty(); up = up.parent_path()) {
      if (fs::exists(up, ec) && !fs::is_directory(up, ec)) fail(up.string() + " is a file, not a directory");
      if (up == up.parent_path()) break;
    }
    fail("directory " + dir.string() + " does not exist");
  }
  if (::access(dir.c_str(), W_OK) != 0) fail("directory " + dir.string() + " is not writable");
}

}  // namespace attnsim::app
