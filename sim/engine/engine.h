// The event-driven engine: executes a TileProgram's launches on a device and reports bytes,
// time and occupancy per launch. Launches run back to back; the L2 is written back and
// invalidated between launches (as Nsight Compute does before every profiled kernel).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/core/tile_op.h"
#include "sim/core/tile_program.h"

namespace attnsim::engine {

// Where a running simulation is, for a progress display (EngineOptions::progress).
struct LaunchProgress {
  std::size_t launch = 0, launches = 0;  // index of the running launch, number of launches
  std::string_view name;                 // the launch's kernel name (valid during the call only)
  std::uint64_t ctas_retired = 0, ctas = 0;
  std::uint64_t events = 0;  // events processed in this launch so far
  double cycles = 0;         // simulated time reached in this launch
  bool done = false;         // the launch has finished (the last call for it)
};

// One op of a traced CTA (EngineOptions::trace), reported when its warp group goes past it.
struct TraceRecord {
  std::size_t launch = 0;        // index of the launch in the program
  std::string_view launch_name;  // valid during the call only
  std::uint64_t cta = 0;         // the CTA's index in dispatch order
  std::uint32_t sm = 0, group = 0;
  std::uint64_t step = 0;        // the kernel's loop step the op belongs to
  std::uint32_t op_index = 0;    // its position in the step's ops
  const core::TileOp* op = nullptr;  // valid during the call only; null for a skipped record
  // sim.mode: sampled: a loop step skipped (its time taken from the measured steps, its accesses
  // warmed) or the whole CTA skipped (counted as its reference CTA); op is null then.
  enum class Skipped : std::uint8_t { kNo, kStep, kCta };
  Skipped skipped = Skipped::kNo;
  double start = 0;  // cycles from the launch's start: when the group reached the op
  double end = 0;    // when the group went on past it (a load: its last piece issued, or its data
                     // back if it blocks; a wait: what it waited for done)
  double ready = 0;  // an async load or MMA: when its data or result is complete; else 0
};

struct EngineOptions {
  double sample_period_ns = 0;            // 0 = automatic (about 256 samples per launch)
  std::uint64_t stall_limit_events = 50'000'000;  // progress guard: events without a retired op
  // Called every progress_every_events events and once when each launch ends; it only
  // observes (results do not depend on it). Empty: not called.
  std::function<void(const LaunchProgress&)> progress;
  std::uint64_t progress_every_events = std::uint64_t{1} << 14;
  bool sampled = false;  // sim.mode: sampled (engine/sampler.h)
  // Sampled mode simulates a launch of fewer tile ops than this in full (its CTAs' op streams,
  // estimated from the probed CTAs): there sampling saves little CPU time and adds its error.
  std::uint64_t sampled_min_ops = core::kDefaultSampledMinOps;  // the workload's sim.min_ops
  // The CTAs between a launch's reference waves and a span of CTAs skipped whole to its end
  // fast-forward (Sampler::fast_forward), and CTAs of launches of 128 waves or more extrapolate
  // the middle of long runs (Sampler::extrapolate_until); off only to compare.
  bool sampled_fast_forward = true;
  // Timed reads of tensors no skipped step reads are counted, in the L2 sets that set sampling
  // leaves unwarmed, at the sampled sets' miss rate where the two differ
  // (MemorySystem::correct_timed_misses); off only to compare.
  bool sampled_timed_miss_correction = true;
  // A timeline of the ops of the CTAs in trace_ctas (sorted; CTA indices in dispatch order, in
  // every launch that has them), one call per op in simulation order; it only observes. In
  // sampled mode a skipped step, or a CTA skipped whole, is one record without an op.
  std::function<void(const TraceRecord&)> trace;
  std::vector<std::uint64_t> trace_ctas;
};

// Throws core::SimError if the simulation cannot make progress, core::ConfigError if a
// launch cannot be placed on the device (e.g. a CTA needs more shared memory than an SM has).
std::vector<core::KernelResult> simulate(const core::DeviceSpec& device,
                                         const core::TileProgram& program,
                                         const EngineOptions& options = {});

}  // namespace attnsim::engine
