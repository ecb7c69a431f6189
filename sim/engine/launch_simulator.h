// One kernel launch on one device: SMs (or scratchpad cores) with resident CTA slots, the CTA
// scheduler, per-SM pipes (LSU issue, tensor core, FP32, SFU, shared memory) as bandwidth
// servers, in-flight load credits (Little's law), async-copy groups, and the event loop.
// Leaves out warp scheduling inside a CTA (a CTA executes its tile ops in order), instruction
// issue limits, and dispatch latency of CTAs.
//
// Timing of a tile load: its 128-B line pieces are issued at the current time through the
// SM's LSU (load_bytes_per_cycle) and timed analytically through L1/L2/HBM (MemorySystem); a
// CTA may hold at most warps * max_inflight_bytes_per_warp bytes in flight and an SM at most
// max_inflight_bytes_per_sm, so achieved bandwidth is in-flight bytes / latency. Credits come
// back per chunk (a quarter of the allowance) by one kCredit event; a CTA out of credits resumes
// only once kResumeLines lines of room are free again (not at every returned chunk), so returned
// credits coalesce instead of fragmenting into one-line chunks: a streaming CTA costs about 0.2
// events per line; a load that fits in its credits costs no event. In the block model
// (l2.tracking_bytes) a CTA short of its own allowance issues a unit's piece whole or not at
// all, overdrawing or idling its allowance so that the bytes it holds in flight average the
// allowance over time (issue_load): one L2 access and one credit event per unit.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/occupancy.h"
#include "sim/core/run_result.h"
#include "sim/core/tile_program.h"
#include "sim/engine/bandwidth_server.h"
#include "sim/engine/engine.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/memory_system.h"
#include "sim/engine/shared_memory_banks.h"

namespace attnsim::engine {

class LaunchSimulator {
 public:
  static constexpr std::uint32_t kMaxAsyncGroups = 64;  // committed, not yet waited-for groups
  static constexpr double kBarrierCycles = 4;           // __syncthreads of a resident CTA
  static constexpr core::Bytes kResumeLines = 3;        // credit room a waiting CTA resumes at

  // Throws core::ConfigError if a CTA cannot be placed on the device at all.
  LaunchSimulator(const core::DeviceSpec& device, const core::KernelLaunch& launch,
                  const core::Workload& workload, const EngineOptions& options);
  // Runs the launch to completion; throws core::SimError if it stops making progress.
  core::KernelResult run();

 private:
  struct Sm {
    BandwidthServer lsu, tensor, fp32, sfu, smem, issue;
    core::Bytes inflight = 0;
    std::uint32_t waiting = 0;         // slots of this SM waiting for load credits
    std::uint64_t waiting_mask = 0;    // which (bit k: the SM's k-th slot; up to 64 slots)
    std::uint32_t warps = 0;
    double warps_integral = 0;  // resident warps x cycles
    double active_cycles = 0;   // cycles with at least one resident CTA
    double last_change = 0;
  };
  struct Slot {
    std::uint64_t cta = 0;
    std::uint32_t sm = 0;
    bool active = false;
    bool waiting_credit = false;
    bool load_in_progress = false;
    std::vector<core::TileOp> ops;
    std::size_t pc = 0;
    std::uint64_t step = 0;
    std::uint32_t load_row = 0;
    core::Bytes load_off = 0;
    double load_done = 0;
    double open_group = 0;
    std::array<double, kMaxAsyncGroups> groups{};
    std::uint32_t group_head = 0, group_count = 0;
    core::Bytes inflight = 0;
    core::Bytes credit_need = 0;  // waiting_credit: room needed before the CTA resumes
    // Block model: the running integral, in byte-cycles, of the CTA allowance minus the bytes
    // in flight over the time the CTA waits for credits or holds more than its allowance;
    // balance_t: when it was last brought up to date.
    double credit_balance = 0;
    double balance_t = 0;
  };
  struct Sample {
    double t = 0;
    double dram_bytes = 0, lts_bytes = 0, warps_pct = 0;
  };

  void dispatch(std::uint32_t slot, double now);
  void advance(std::uint32_t slot, double now);
  bool issue_load(std::uint32_t slot, double now);
  template <bool block>
  bool issue_load_model(std::uint32_t slot, double now);  // issue_load in the line / block model
  void issue_store(Slot& s, const core::TileOp& op, double now);
  void retire(std::uint32_t slot, double now);
  void return_credit(std::uint32_t slot, core::Bytes bytes, double now);
  core::Bytes credit_room(const Slot& s, const Sm& sm) const;  // min(CTA, SM) allowance left
  core::Bytes sm_room(const Sm& sm) const;                     // the SM's allowance left
  void account(Slot& s, double now) const;  // block model: brings credit_balance up to `now`
  // Sets slot `slot` (= s, on SM sm) waiting for load credits or not, with the SM's count and mask.
  void set_waiting(std::uint32_t slot, Slot& s, Sm& sm, bool on) const {
    s.waiting_credit = on;
    if (on) ++sm.waiting;
    else --sm.waiting;
    if (slots_per_sm_ > 64) return;
    const std::uint64_t bit = std::uint64_t{1} << (slot - s.sm * slots_per_sm_);
    sm.waiting_mask = on ? sm.waiting_mask | bit : sm.waiting_mask & ~bit;
  }
  void set_warps(Sm& sm, std::uint32_t warps, double now);
  void take_sample(double now);
  void note_progress();
  void check_progress(double now);
  void report_progress(double now, bool done) const;  // calls options_.progress
  [[noreturn]] void stall(const std::string& why, double now) const;
  core::KernelResult results(double end);

  const core::DeviceSpec& device_;
  const core::KernelLaunch& launch_;
  const core::Workload& workload_;
  EngineOptions options_;
  core::LaunchShape shape_;
  core::OccupancyResult occupancy_;
  std::uint32_t slots_per_sm_ = 1;
  std::uint32_t warps_per_cta_ = 1;
  core::Bytes cta_credit_ = 0;  // 0 = unlimited
  core::Bytes sm_credit_ = 0;   // 0 = unlimited
  core::Bytes chunk_bytes_ = 0;
  core::Bytes local_stride_ = 0;  // bytes of local memory per resident CTA slot (0: none)
  core::Bytes resume_bytes_ = 0;  // room a CTA out of credits waits for (kResumeLines lines)
  bool dither_ = false;  // block model with a CTA allowance: whole pieces, credit_balance
  std::uint32_t credit_group_ = 0;  // dither_: DRAM requests per line-model credit chunk
  bool l1_for_sync_loads_ = false;

  MemorySystem memory_;
  SharedMemoryBanks banks_;
  EventQueue queue_;
  std::vector<Sm> sms_;
  std::vector<Slot> slots_;
  std::uint64_t num_ctas_ = 0;
  std::uint64_t next_cta_ = 0;
  std::uint64_t retired_ctas_ = 0;
  double end_time_ = 0;

  // Progress guard.
  std::uint64_t since_progress_ = 0;
  std::uint64_t since_time_moved_ = 0;
  double last_time_ = -1;

  // Statistics.
  std::uint64_t events_ = 0;
  double flops_ = 0;
  std::uint64_t wavefronts_ = 0, bank_conflicts_ = 0;
  // Units each SM pipe served, summed over SMs (busy cycles = units / rate): MMA FLOP, FP32 and
  // SFU ops, issued thread instructions, global bytes through the LSU.
  double mma_flops_ = 0, fp32_ops_ = 0, exp_ops_ = 0, issue_ops_ = 0;
  core::Bytes lsu_bytes_ = 0;
  std::vector<double> blocking_done_;  // completion times of blocking loads (pointer_chase)
  bool record_blocking_ = false;
  double sample_period_ = 0;           // cycles
  bool auto_period_ = true;
  std::vector<Sample> samples_;
};

}  // namespace attnsim::engine
