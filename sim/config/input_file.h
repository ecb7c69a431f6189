// Checks on input paths before they are parsed: exists, is a regular file (not a directory),
// can be opened. Turns what would be a stream failure into a located ConfigError.
#pragma once

#include <string>

namespace attnsim::config {

// Throws core::ConfigError naming `path` (and `key`, e.g. "--workload") when it does not exist,
// is a directory or cannot be opened for reading.
void require_readable_file(const std::string& path, const std::string& key, const std::string& what);

}  // namespace attnsim::config
