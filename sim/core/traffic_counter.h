// The "bytes only" consumer of a TileProgram: walks every CTA's ops (the stream the engine
// times) and sums global load/store bytes per tensor per launch. No caches, no timing.
#pragma once

#include <vector>

#include "sim/core/io_counts.h"
#include "sim/core/tile_program.h"

namespace attnsim::core {

class TrafficCounter {
 public:
  // Every global load/store reaches HBM: the quantity closed_form_traffic() predicts.
  static LaunchTraffic count(const KernelLaunch& launch);
  static std::vector<LaunchTraffic> count(const TileProgram& program);

  // Distinct bytes each launch reads and writes (union of the accessed byte ranges per
  // tensor): the quantity compulsory_traffic() predicts. Memory grows with the number of
  // tile rows touched, so meant for small shapes.
  static LaunchTraffic count_distinct(const KernelLaunch& launch);
  static std::vector<LaunchTraffic> count_distinct(const TileProgram& program);
};

}  // namespace attnsim::core
