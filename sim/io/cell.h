// One value in a results table or a key/value listing: integer, real, boolean or text.
// Plain data; conversions to HDF5 and JSON live with the writers.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace attnsim::io {

using Cell = std::variant<std::int64_t, double, bool, std::string>;

// A named value, e.g. {"block_m", 128}. Lists of them keep their order.
struct Field {
  std::string name;
  Cell value;
};
using Fields = std::vector<Field>;

std::string cell_to_string(const Cell& c);  // integers exactly, reals shortest round-trip

}  // namespace attnsim::io
