// Crash-safe record of a sweep's finished points: a directory "<out>.partial/" with one file per
// point, each written to a temporary name, fsync'ed and renamed (atomic on POSIX). No locking:
// one writer per journal.
#pragma once

#include <string>
#include <vector>

#include "sim/io/point_record.h"

namespace attnsim::io {

class PointJournal {
 public:
  // `dir` is usually dir_for(out_path); `sweep_hash` identifies the sweep it belongs to.
  PointJournal(std::string dir, std::string sweep_hash);

  // "<out>.partial" beside the file the output replaces (links followed); for a device or FIFO
  // output, a directory in $TMPDIR (io::journal_dir_for, docs/output-paths.md).
  static std::string dir_for(const std::string& out_path);

  bool exists() const;
  // Creates an empty journal (the directory must not exist). Throws OutputError (and leaves no
  // directory) when it cannot be written.
  void create();
  // Reads every finished point, ascending index. Throws core::ConfigError if the journal was made
  // by a different sweep file (hash mismatch) or is not a journal.
  std::vector<PointRecord> load() const;
  // How many finished points the journal holds (its record files; none read). 0 if it is absent.
  std::size_t size() const;
  // Makes `p` durable. Throws OutputError (a full disk, ...; nothing of `p` left) on failure.
  void append(const PointRecord& p);
  // Deletes the journal directory and everything in it.
  void remove();

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string sweep_hash_;
};

}  // namespace attnsim::io
