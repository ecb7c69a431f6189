// The typed totals of one kernel launch, as the engine hands them over (KernelResult::totals):
// its counters (summed with +=), memory-system counters, busy cycles per resource, occupancy and
// shape. Plain data without names: sim/io gives them their Nsight Compute / attnsim__ names
// (io::launch_metrics, sim/io/launch_metrics.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/core/occupancy.h"
#include "sim/core/types.h"

namespace attnsim::core {

// The engine's counters of one launch.
struct LaunchStats {
  std::uint64_t events = 0;
  double flops = 0;  // tensor core, SFU and FP32 work
  std::uint64_t wavefronts = 0, bank_conflicts = 0;  // shared memory
  // Units each SM pipe served, summed over SMs (busy cycles = units / rate): MMA FLOP, FP32 and
  // SFU ops, issued thread instructions, global bytes through the LSU.
  double mma_flops = 0, fp32_ops = 0, exp_ops = 0, issue_ops = 0;
  Bytes lsu_bytes = 0;
  // Bytes that async copies (cp.async, TMA) wrote into shared memory, per receiving CTA: they
  // occupy its SM's banks as shared-memory wavefronts do (BusyCycles::smem), but Nsight Compute
  // counts them in no l1tex__data_pipe_lsu_wavefronts_mem_shared, so `wavefronts` leaves them out.
  Bytes fill_bytes = 0;

  LaunchStats& operator+=(const LaunchStats& o) {
    events += o.events;
    flops += o.flops;
    wavefronts += o.wavefronts;
    bank_conflicts += o.bank_conflicts;
    mma_flops += o.mma_flops;
    fp32_ops += o.fp32_ops;
    exp_ops += o.exp_ops;
    issue_ops += o.issue_ops;
    lsu_bytes += o.lsu_bytes;
    fill_bytes += o.fill_bytes;
    return *this;
  }
};

// The memory system's counters (engine::MemorySystem, engine::ScratchpadMemory).
struct MemoryCounters {
  // L2 tag-stage lookups, as Nsight Compute's lts__t_* count them: a request that the SM's near
  // partition does not serve (a read missing the near copy, a store to a far-homed line) is
  // looked up there and in its home partition (counted twice); stores count as hits.
  std::uint64_t lts_sectors = 0;      // sectors looked up (reads + writes)
  std::uint64_t lts_hit_sectors = 0;
  Bytes lts_bytes = 0;                // lts__t_bytes: sector-granular (exact bytes when L2 is off)
  Bytes l2_request_bytes = 0;         // the same, each request counted once (sector-granular)
  std::uint64_t l1_hits = 0;
  std::uint64_t l1_misses = 0;
  std::uint64_t l2_near_hits = 0, l2_far_hits = 0, l2_misses = 0;  // line accesses
  std::uint64_t l2_writebacks = 0;    // dirty lines written back (evictions + final flush)
};

// Busy cycles of each resource up to the launch's end (before the final write-back, which does
// not extend the launch), summed over its instances: the inputs of attnsim__bound
// (core/derived_metrics.h). The SM pipes' busy cycles are the units they served over their rates.
struct BusyCycles {
  double dram = 0, l2 = 0, dma = 0, lsu = 0, smem = 0, tensor = 0, fp32 = 0, sfu = 0, issue = 0;
};

// Everything one launch reports at its end.
struct LaunchTotals {
  LaunchStats stats;
  double cycles = 0;
  double time_ns = 0;
  Bytes dram_read = 0, dram_write = 0;
  MemoryCounters memory;
  double warps_integral = 0, active_cycles = 0;  // summed over SMs
  double max_warps_per_sm = 1;
  OccupancyResult occupancy;
  BusyCycles busy;
  // The launch's shape (LaunchShape): threads and registers per thread, shared memory per CTA.
  std::uint32_t threads_per_cta = 0, regs_per_thread = 0;
  Bytes smem_per_cta = 0;
  std::uint64_t ctas = 0;
  double waves = 0;
  // (end - the median end of the last wave's CTAs) / end (engine::LastWave): how much of the time
  // rests on the slowest CTAs, whose ends a small change of the dynamics moves.
  double tail = 0;
  std::optional<double> cycles_per_load;  // kernels that time their blocking loads
  // sim.mode: sampled (engine/sampler.h): ops simulated over the launch's ops, and the relative
  // standard error of the CTAs' time that the extrapolated steps may carry (summed, so a bound).
  bool sampled = false;
  double sampled_fraction = 1;
  double sampling_error = 0;
  std::uint64_t ctas_skipped = 0;  // CTAs not simulated, counted as the reference CTA
  // CTAs simulated up to their run's warm-up, then skipped on unwarmed, counted as the reference
  // CTA (engine::Sampler::fast_forward).
  std::uint64_t ctas_fast_forwarded = 0;
  // Simulated CTAs that skipped the middle of a long run unwarmed, its memory counts
  // extrapolated (engine::Sampler::extrapolate_until).
  std::uint64_t ctas_extrapolated = 0;
  std::string_view in_full_because;  // sampled, but nothing skipped: why (static text; empty otherwise)
};

}  // namespace attnsim::core
