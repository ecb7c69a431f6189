// One kernel launch on one device: the event loop that runs the launch's CTAs on the SMs' pipes
// and the memory system. Its parts: Sm (pipes, issue slots, resident warps), CtaScheduler
// (placement, waves, clusters), CtaSlot (a resident CTA) and its WarpGroups (one in-order op
// stream each), Mbarrier / NamedBarrier, LoadCredits (in-flight allowances), TileAccess (line /
// block issue of loads and stores), LaunchStats (counters, series), ProgressGuard. The
// synchronization ops between warp groups are in launch_sync.cpp. Leaves out warp scheduling
// inside a warp group (a group executes its tile ops in order) and dispatch latency of CTAs.
//
// Timing of a tile load: its 128-B line pieces are issued at the current time through the
// SM's LSU (load_bytes_per_cycle) and timed analytically through L1/L2/HBM (MemorySystem); a
// CTA may hold at most warps * max_inflight_bytes_per_warp bytes in flight and an SM at most
// max_inflight_bytes_per_sm, so achieved bandwidth is in-flight bytes / latency (LoadCredits,
// TileAccess). The memory is a template parameter, chosen once per launch by the device kind
// (engine.cpp): MemorySystem (GPU caches) or ScratchpadMemory (DMA engines, no caches).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/core/tile_program.h"
#include "sim/engine/cta_scheduler.h"
#include "sim/engine/cta_slot.h"
#include "sim/engine/engine.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/last_wave.h"
#include "sim/engine/launch_stats.h"
#include "sim/engine/load_credits.h"
#include "sim/engine/memory_system.h"
#include "sim/engine/progress_guard.h"
#include "sim/engine/sampler.h"
#include "sim/engine/scratchpad_memory.h"
#include "sim/engine/shared_memory_banks.h"
#include "sim/engine/sm.h"
#include "sim/engine/tile_access.h"
#include "sim/engine/warp_group.h"

namespace attnsim::engine {

template <class Memory>
class LaunchSimulator {
 public:
  static constexpr std::uint32_t kMaxAsyncGroups = CtaSlot::kMaxAsyncGroups;
  static constexpr double kBarrierCycles = 4;  // __syncthreads / bar.sync once all threads arrived
  static constexpr core::Bytes kResumeLines = LoadCredits::kResumeLines;

  // Throws core::ConfigError if a CTA cannot be placed on the device at all.
  LaunchSimulator(const core::DeviceSpec& device, const core::KernelLaunch& launch,
                  const EngineOptions& options);
  // Runs the launch to completion; throws core::SimError if it stops making progress.
  core::KernelResult run();
  // l2.carry_writeback: the previous launch's final write-back, queued on the HBM channels ahead
  // of this launch's traffic (before run()); and this launch's, as counted (after run()).
  void queue_writes(core::Bytes bytes) {
    if constexpr (std::is_same_v<Memory, MemorySystem>) memory_.queue_writes(bytes);
  }
  core::Bytes final_writeback() const { return final_writeback_; }

 private:
  void dispatch(std::uint32_t slot, double now);
  void place_clusters(double now);
  void advance(std::uint32_t slot, std::uint32_t group, double now);
  void resume_credit(std::uint32_t slot, double now);  // the groups of `slot` waiting for credits
  double execute(std::uint32_t slot, CtaSlot& s, std::uint32_t gi, WarpGroup& g, Sm& sm, const core::TileOp& op,
                 double now);
  void retire(std::uint32_t slot, double now);
  // launch_copies.cpp: async copies (cp.async) queued behind a group's earlier ones while the
  // group goes on; their lines are issued as load credits allow.
  void queue_copy(std::uint32_t slot, std::uint32_t group, WarpGroup& g, const core::TileOp& op, double now);
  void issue_copies(std::uint32_t slot, std::uint32_t group, double now);
  // launch_sync.cpp: the ops between warp groups (mbarriers, named barriers, multicast delivery).
  // The waiting ones return when the group may go on, or -1 when it blocks (it is resumed,
  // past the op, by the arrival that releases it).
  void check_groups() const;  // warps and setmaxnreg budgets of launch_.warp_groups()
  std::int64_t cluster_member(const CtaSlot& s, std::uint32_t rank) const;  // its slot, or -1
  template <class F>
  void for_targets(CtaSlot& s, std::uint32_t mask, F&& f);
  void mbar_arrive(CtaSlot& s, const core::TileOp& op, double now);
  double mbar_wait(std::uint32_t slot, CtaSlot& s, std::uint32_t group, const core::TileOp& op, double now);
  void complete_tx(CtaSlot& s, const core::TileOp& op, double at);
  // An async copy's bytes written into shared memory: counted for every receiving CTA, and the
  // banks of the SMs it multicasts to held from `now` (the issuing SM's: TileAccess, per piece).
  void deliver_fills(CtaSlot& s, const core::TileOp& op, double now);
  void wake_mbar(std::uint32_t slot, Mbarrier& b);
  double named_sync(std::uint32_t slot, CtaSlot& s, std::uint32_t group, std::uint32_t id, std::uint64_t count,
                    bool wait, double now);
  Mbarrier& mbarrier(CtaSlot& s, const core::TileOp& op) const;
  void return_credit(std::uint32_t slot, core::Bytes bytes, double now);
  // launch_trace.cpp: reports op g.ops[g.pc] of the traced CTA in `s` (EngineOptions::trace),
  // which the group goes past at `done`.
  void trace_op(const CtaSlot& s, std::uint32_t group, WarpGroup& g, double done);
  // A step of group g skipped, or the CTA skipped whole, from g.op_start to `end` (sampled).
  void trace_skipped(const CtaSlot& s, std::uint32_t group, WarpGroup& g, double end, TraceRecord::Skipped what);
  void take_sample(double now);
  void check_progress(double now) {
    if (const char* why = guard_.check(now)) stall(why, now);
  }
  void report_progress(double now, bool done) const;  // calls options_.progress
  [[noreturn]] void stall(const std::string& why, double now) const;
  BusyCycles busy_cycles() const;
  core::KernelResult results(double end);
  // sim.mode: sampled (launch_sampling.cpp). Each returns true when it has queued the slot's
  // next kResume (the caller returns).
  void init_sampler();
  bool sampled_dispatch(std::uint32_t slot, double now);
  bool sampled_step(std::uint32_t slot, WarpGroup& g, double now);  // g: the slot's one warp group
  std::vector<core::TileOp> ff_ops_;  // a fast-forwarded step's ops (sampled_step)
  bool sampled_sleep(std::uint32_t slot, double until, double now);
  void add_skipped_stats();

  const core::DeviceSpec& device_;
  const core::KernelLaunch& launch_;
  EngineOptions options_;
  core::LaunchShape shape_;
  CtaScheduler scheduler_;
  std::uint32_t slots_per_sm_ = 1;
  std::uint32_t warps_per_cta_ = 1;
  std::vector<core::WarpGroupSpec> groups_;  // launch_.warp_groups()
  std::vector<std::uint32_t> mbar_counts_;   // launch_.mbarriers()
  core::Bytes local_stride_ = 0;  // bytes of local memory per resident CTA slot (0: none)

  Memory memory_;
  SharedMemoryBanks banks_;
  EventQueue queue_;
  LoadCredits credits_;
  TileAccess<Memory> access_;
  std::vector<Sm> sms_;
  std::vector<CtaSlot> slots_;
  double end_time_ = 0;
  LastWave last_wave_;  // retire times of the last wave (the launch's tail)
  core::Bytes final_writeback_ = 0;  // DRAM bytes of the dirty lines left at the end (results())
  ProgressGuard guard_;

  LaunchStats stats_;
  std::vector<double> blocking_done_;  // completion times of blocking loads (shape_.timed_loads > 0)
  bool record_blocking_ = false;
  bool queue_copies_ = false;  // sm.queue_async_copies on a credit-limited device
  SampleSeries series_;
  Sampler sampler_;  // enabled in sim.mode: sampled
  bool sample_steps_ = false;  // sampled, and the CTAs are one warp group: the step hooks run
  bool sampling_ = false;      // sampled and something may be skipped: the CTA and access hooks run
  bool tracing_ = false;       // options_.trace is set and names CTAs
  std::string trace_name_;     // launch_.name() while tracing
};

extern template class LaunchSimulator<MemorySystem>;
extern template class LaunchSimulator<ScratchpadMemory>;

}  // namespace attnsim::engine
