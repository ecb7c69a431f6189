// Writing output files so that a failure of the file system (full disk, quota, read-only or
// failing device) leaves no half-written file behind and is reported with the system's reason.
#pragma once

#include <cstddef>
#include <string>

#include "sim/core/errors.h"

namespace attnsim::io {

// An output file could not be written. Exit 2 like an --out in an unwritable directory: the
// remedy (free space, another path) is the user's, not a failure of the simulation. Formatted
// "<path>: <what>", e.g. "out.h5: cannot write: no space left on device".
class OutputError : public core::ConfigError {
 public:
  OutputError(const std::string& path, const std::string& what);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// OutputError for `path` from errno value `err`: "<path>: <action>: <strerror, lower case>".
OutputError output_error(const std::string& path, int err, const std::string& action = "cannot write");

// Creates or truncates `path`, writes `size` bytes (continuing after short writes), fsyncs and
// closes it. On any failure removes `path` and throws OutputError.
void write_file_durably(const std::string& path, const void* data, std::size_t size);

// rename(2) of `from` to `to`; on failure removes `from` and throws OutputError naming `to`.
void rename_or_remove(const std::string& from, const std::string& to);

}  // namespace attnsim::io
