#include "sim/io/provenance.h"

#include <cstdio>

#include "attnsim/version.h"

namespace attnsim::io {

Provenance Provenance::current(std::string command_line) {
  Provenance p;
  p.attnsim_version = kVersion;
  p.git_revision = kGitRevision;
  p.command_line = std::move(command_line);
  return p;
}

std::string content_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace attnsim::io
