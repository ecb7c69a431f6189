// The memory counts the sampler attributes to CTAs: all of them (MemoryCount), and the part one
// access can change (AccessSnapshot).
#pragma once

#include <array>

#include "sim/core/io_counts.h"
#include "sim/core/launch_totals.h"
#include "sim/core/tile_op.h"

namespace attnsim::engine {

// What the memory system has counted so far (the parts a skipped op would have added to).
struct MemoryCount {
  core::MemoryCounters c;
  core::TensorTraffic dram, lts, l1;
};

// What one access by an op of tensor `t` can change of the memory counts: the counters, every
// tensor's DRAM writes (the dirty lines it evicts), and tensor t's bytes at each level. Taken
// before the access, so that after it the changes are 37 numbers instead of a MemoryCount's
// 136.
struct AccessSnapshot {
  core::MemoryCounters c;
  std::array<core::Bytes, core::kNumTensors> dram_write{};
  core::TensorBytes dram, lts, l1;
  core::Tensor t = core::Tensor::kQ;
};

}  // namespace attnsim::engine
