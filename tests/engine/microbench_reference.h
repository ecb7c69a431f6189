// Reads the pointer-chase and stream-read points and the copy bandwidth of tests/data/reference/microbench.json with
// regular expressions (the file's layout is fixed; no JSON dependency). Test helper only.
#pragma once

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnsim::engine::testing {

struct ChasePoint {
  double working_set_mib = 0;
  double cycles_per_load = 0;
};

struct StreamPoint {
  std::uint64_t bytes_per_step = 0;
  std::uint32_t warps = 0;
  std::uint64_t programs = 0;
  double gbps = 0;
};

inline std::string read_microbench() {
  std::ifstream in(std::string(ATTNSIM_REFERENCE_DIR) + "/microbench.json");
  if (!in) throw std::runtime_error("cannot open microbench.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string section(const std::string& text, const std::string& key) {
  const auto at = text.find("\"" + key + "\"");
  if (at == std::string::npos) throw std::runtime_error("no section " + key);
  return text.substr(at);
}

inline std::vector<ChasePoint> chase_points() {
  const std::string s = section(section(read_microbench(), "pointer_chase"), "points");
  const std::string body = s.substr(0, s.find(']'));
  const std::regex re(R"re("working_set_MiB":\s*([0-9.eE+-]+)[^}]*"cycles_per_load":\s*([0-9.eE+-]+))re");
  std::vector<ChasePoint> out;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2])});
  return out;
}

inline std::vector<StreamPoint> stream_points() {
  const std::string s = section(section(read_microbench(), "stream_read"), "points");
  const std::string body = s.substr(0, s.find(']'));
  const std::regex re(
      R"re("bytes_per_step":\s*([0-9]+),\s*"warps":\s*([0-9]+),\s*"programs":\s*([0-9]+)[^}]*"GBps":\s*([0-9.eE+-]+))re");
  std::vector<StreamPoint> out;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stoull((*it)[1]), static_cast<std::uint32_t>(std::stoul((*it)[2])), std::stoull((*it)[3]),
                   std::stod((*it)[4])});
  return out;
}

// copy_bandwidth.GBps: bytes read + bytes written per second of a device-to-device copy.
inline double copy_gbps() {
  const std::string s = section(read_microbench(), "copy_bandwidth");
  std::smatch m;
  if (!std::regex_search(s, m, std::regex(R"re("GBps":\s*([0-9.eE+-]+))re")))
    throw std::runtime_error("no copy_bandwidth.GBps");
  return std::stod(m[1]);
}

}  // namespace attnsim::engine::testing
