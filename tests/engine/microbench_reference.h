// Reads the pointer-chase and stream-read points and the copy bandwidth of
// tests/data/reference/microbench.json with nlohmann::json. Test helper only.
#pragma once

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

inline nlohmann::json read_microbench() {
  std::ifstream in(std::string(ATTNSIM_REFERENCE_DIR) + "/microbench.json");
  if (!in) throw std::runtime_error("cannot open microbench.json");
  return nlohmann::json::parse(in);  // throws nlohmann::json::parse_error on a malformed file
}

inline std::vector<ChasePoint> chase_points() {
  const nlohmann::json doc = read_microbench();  // kept alive: the loop below walks into it
  std::vector<ChasePoint> out;
  for (const auto& p : doc.at("pointer_chase").at("points"))
    out.push_back({p.at("working_set_MiB").get<double>(), p.at("cycles_per_load").get<double>()});
  return out;
}

inline std::vector<StreamPoint> stream_points() {
  const nlohmann::json doc = read_microbench();
  std::vector<StreamPoint> out;
  for (const auto& p : doc.at("stream_read").at("points"))
    out.push_back({p.at("bytes_per_step").get<std::uint64_t>(), p.at("warps").get<std::uint32_t>(),
                   p.at("programs").get<std::uint64_t>(), p.at("GBps").get<double>()});
  return out;
}

// copy_bandwidth.GBps: bytes read + bytes written per second of a device-to-device copy.
inline double copy_gbps() { return read_microbench().at("copy_bandwidth").at("GBps").get<double>(); }

}  // namespace attnsim::engine::testing
