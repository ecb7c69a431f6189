// Where an output path leads, and writing a finished file there: the one policy of every file
// attnsim writes (docs/output-paths.md). A regular file, or a name not yet taken, is replaced
// atomically through a temporary beside it; a symbolic link is followed and its final target
// replaced the same way (the link stays); a character device or a FIFO receives the finished
// file's bytes, written once (/dev/null discards them); a directory, a socket or a block device
// is refused. Nothing under a device's directory is created or renamed.
#pragma once

#include <cstddef>
#include <string>

namespace attnsim::io {

struct OutputTarget {
  enum class Kind { kFile, kStream };
  Kind kind = Kind::kFile;
  std::string path;    // as given: what messages name
  std::string target;  // kFile: the file replaced (links followed; may not exist yet); kStream: path
  std::string what;    // what `path` is: "a regular file", "a character device", "a FIFO", ...
};

// Resolves `path` by the policy without writing anything. Throws OutputError (exit 2) naming
// `path` and what it is when it is refused: a directory, a socket, a block device, a link that
// leads to one of those, a file or dangling link whose directory does not exist or is not
// writable, a device or FIFO this process may not write, a loop of links.
OutputTarget resolve_output(const std::string& path);

// Writes `size` bytes as the whole content of output `path` by the policy (resolve_output at the
// moment of writing). Throws OutputError naming `path`: "<path>: cannot write: no space left on
// device" on a full disk or /dev/full; nothing partial is left behind a regular file.
void write_output(const std::string& path, const void* data, std::size_t size);

// The sweep journal directory of output `path`: "<target>.partial" beside the file a regular
// output replaces; for a stream (a device or FIFO, whose directory is not written),
// "$TMPDIR/attnsim-<name>-<hash of the absolute path>.partial" (TMPDIR default /tmp), the same
// for every run given that path, so --resume finds it.
std::string journal_dir_for(const std::string& path);

}  // namespace attnsim::io
