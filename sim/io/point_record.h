// One finished sweep point as the writers see it: index, status, swept parameters, resolved
// config text and, for "ok" points, the RunResult. The unit of journaling and of HDF5 rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/core/run_result.h"
#include "sim/io/cell.h"

namespace attnsim::io {

inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusImpossible = "impossible";  // failed constraint or ConfigError
inline constexpr const char* kStatusError = "error";            // SimError while running

struct PointRecord {
  std::uint64_t index = 0;
  std::string status = kStatusOk;
  std::string reason;                 // empty for "ok"
  Fields params;                      // swept parameters (and "device"), in axis order
  std::string config_yaml;            // resolved workload + device name, YAML text
  std::optional<core::RunResult> result;  // present when status == "ok"
};

// Exact text serialization (journal files, /points/<i>/record). Doubles round-trip exactly;
// RunResult::workload is not serialized (config_yaml carries it).
std::string serialize_point(const PointRecord& p);
// Throws std::runtime_error on a truncated or malformed record.
PointRecord parse_point(const std::string& text);

}  // namespace attnsim::io
