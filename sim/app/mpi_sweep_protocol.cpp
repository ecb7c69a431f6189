#include "sim/app/mpi_sweep_protocol.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace attnsim::app {

namespace {
const char* const kMagic = "attnsim-ready 1";
}

std::string encode_ready(const ReadyMessage& m) {
  char secs[64];
  std::snprintf(secs, sizeof secs, "%a", m.compute_seconds);  // hex float: exact
  std::string out = std::string(kMagic) + "\n" + secs + "\n" + std::to_string(m.records.size()) + "\n";
  for (const auto& r : m.records) {
    const std::string text = io::serialize_point(r);
    out += std::to_string(text.size()) + "\n" + text;
  }
  return out;
}

ReadyMessage decode_ready(const std::string& text) {
  std::size_t pos = 0;
  auto line = [&]() {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) throw std::runtime_error("truncated ready message");
    std::string s = text.substr(pos, nl - pos);
    pos = nl + 1;
    return s;
  };
  if (line() != kMagic) throw std::runtime_error("not a ready message");
  ReadyMessage m;
  m.compute_seconds = std::strtod(line().c_str(), nullptr);
  const std::uint64_t n = std::stoull(line());
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::size_t len = std::stoull(line());
    if (pos + len > text.size()) throw std::runtime_error("truncated record in ready message");
    m.records.push_back(io::parse_point(text.substr(pos, len)));
    pos += len;
  }
  if (pos != text.size()) throw std::runtime_error("trailing bytes in ready message");
  return m;
}

std::string encode_indices(const std::vector<std::uint64_t>& indices) {
  std::string out;
  for (const auto i : indices) out += std::to_string(i) + " ";
  return out;
}

std::vector<std::uint64_t> decode_indices(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::uint64_t> out;
  std::uint64_t i = 0;
  while (in >> i) out.push_back(i);
  return out;
}

}  // namespace attnsim::app
