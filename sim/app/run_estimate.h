// What one simulation will cost, estimated from its TileProgram and device before it runs: engine
// events (tile ops executed), and peak host memory (cache tag arrays, resident CTA slots, event
// queue, functional-mode matrices). Upper-bound style; leaves out the allocator's overhead.
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/device_spec.h"
#include "sim/core/tile_program.h"
#include "sim/core/types.h"

namespace attnsim::app {

struct RunEstimate {
  double events = 0;            // tile ops over every CTA of every launch (the engine's events)
  double ctas = 0;              // CTAs over every launch
  double l2_tag_bytes = 0;      // L2 tag array: one 16-byte way per 128-byte line
  double l1_tag_bytes = 0;      // per-SM L1 tag arrays
  double slot_bytes = 0;        // resident CTA slots with one loop step of ops each, event queue
  double functional_bytes = 0;  // functional mode: one (batch, head) pair's matrices in double
  double peak_memory_bytes() const { return l2_tag_bytes + l1_tag_bytes + slot_bytes + functional_bytes; }
  // "peak memory ~1.2 GiB (L2 tags 7.5 MiB, ...), ~3.4e6 events over 1024 CTAs"
  std::string describe() const;
};

// Walks the first and last CTA of each launch (at most kMaxProbedSteps loop steps each) to count
// ops per CTA; cheap next to the run itself.
RunEstimate estimate_run(const core::TileProgram& program, const core::DeviceSpec& device);

// Half the physical RAM (sysconf); 0 when it cannot be determined (no limit).
core::Bytes default_max_memory_bytes();

// "512 B", "7.5 MiB", "1.2 GiB".
std::string format_bytes(double bytes);

}  // namespace attnsim::app
