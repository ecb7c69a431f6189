// Checks an output path (--out) before any work is done, so a run that cannot write its result
// fails at once with exit 2 instead of after the simulation. Nothing is created here. The policy
// (what a link, a device, a FIFO or a directory given as an output becomes) is io::resolve_output
// (sim/io/output_target.h, docs/output-paths.md).
#pragma once

#include <ostream>
#include <string>

namespace attnsim::app {

// Throws core::ConfigError naming `flag` and `path` when io::resolve_output refuses `path`: a
// directory, a socket, a block device, a missing or unwritable directory, a dangling link into a
// missing directory, ...
void check_output_path(const std::string& path, const std::string& flag);

// Where a command prints its report: `out`, or std::cerr when output `path` is a stream that is
// this process's standard output (--out /dev/stdout piped on), so that stdout carries the results
// file's bytes alone.
std::ostream& report_stream(const std::string& path, std::ostream& out);

}  // namespace attnsim::app
