// Provenance written as root attributes of every HDF5 output: version, git revision, command
// line, creator, schema version and, for sweeps, the sweep file's text and its hash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace attnsim::io {

inline constexpr std::int64_t kSchemaVersion = 2;  // 2: occupancy, rate and bound columns (docs/hdf5-schema.md)

struct Provenance {
  std::string attnsim_version;
  std::string git_revision;
  std::string command_line;          // e.g. "attnsim sweep s.yaml --out s.h5 -j 2"
  std::string created_by = "attnsim";
  std::string sweep_text;            // sweeps only: the sweep file as read
  std::string sweep_hash;            // sweeps only: content_hash(sweep_text)
  std::string shard;                 // sharded sweeps only: "I/N"

  // Version and revision of this build (sim/core/version.h.in), with `command_line`.
  static Provenance current(std::string command_line);
};

// FNV-1a 64-bit of `text`, as 16 lowercase hex digits ("fnv1a64:" prefix). Identifies a sweep
// file's content for --resume and merge; not a cryptographic hash.
std::string content_hash(std::string_view text);

}  // namespace attnsim::io
