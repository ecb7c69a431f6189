// Writing output files so that a failure of the file system (full disk, quota, read-only or
// failing device) leaves no half-written file behind and is reported with the system's reason.
// Where a given output path leads (a regular file, a link, a device, ...) is decided in
// sim/io/output_target.h; this file does the writing.
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

// A temporary file being written. The constructor creates `base` exclusively (O_CREAT|O_EXCL, so
// never an existing file or a planted link), or `base-1`, `base-2`, ... while the name is taken
// (a leftover of a killed process). Until commit() renames it, the destructor removes it, and so
// does remove_live_temporaries() (from a SIGINT/SIGTERM handler). Errors throw OutputError naming
// `shown`, the path the user gave.
class TemporaryFile {
 public:
  TemporaryFile(const std::string& base, std::string shown);
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  const std::string& path() const { return path_; }
  // Writes `size` bytes (after short writes, EINTR), fsyncs and closes the file.
  void write_all(const void* data, std::size_t size);
  // Renames the finished file onto `target` (same directory); it is then no longer removed.
  void commit(const std::string& target);

 private:
  void discard() noexcept;
  std::string path_, shown_;
  int fd_ = -1;
  int slot_ = -1;  // in the table remove_live_temporaries() reads; -1 when not listed
  bool committed_ = false;
};

// Writes `size` bytes to a TemporaryFile named `tmp_base` (default "<target>.tmp-<pid>") beside
// `target`, fsyncs it and renames it onto `target`; a reader sees the old file or the whole new
// one. On failure `target` is left as it was, the temporary is removed, and OutputError names
// `shown` (default `target`).
void replace_file_atomically(const std::string& target, const void* data, std::size_t size,
                             const std::string& shown = "", const std::string& tmp_base = "");

// Unlinks every TemporaryFile alive in this process. Async-signal-safe: for a SIGINT or SIGTERM
// handler that then ends the process (app::remove_temporaries_on_signals).
void remove_live_temporaries() noexcept;

}  // namespace attnsim::io
