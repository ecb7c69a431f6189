// The global-memory path of one launch on a GPU: per-SM L1 (optional), the partitioned L2 with
// one bandwidth server per partition, HBM channels (a scratchpad device has ScratchpadMemory).
// Times one access analytically from the servers' state; counts bytes per tensor per level.
// Accesses are at most one line, or one tracking unit when the device sets the coarser
// l2.tracking_bytes (the block model: residency, LRU and requests per unit, DRAM transfers per
// HBM interleave granule of the missing sectors). No request merging across SMs, no coherence, no TLB. With the L2 off (capacity 0) the
// L1 is bypassed as well, so every global byte requested reaches HBM (the closed-form setting).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/launch_totals.h"
#include "sim/core/run_result.h"
#include "sim/engine/bandwidth_server.h"
#include "sim/engine/hbm.h"
#include "sim/engine/l1_cache.h"
#include "sim/engine/l2_cache.h"

namespace attnsim::engine {

using core::MemoryCounters;

class MemorySystem {
 public:
  // `l1_bytes_per_sm`: L1 capacity left by the shared-memory carve-out (0 = no L1). `device` is a
  // GPU (kind: gpu); its scratchpad.* fields are not read.
  MemorySystem(const core::DeviceSpec& device, core::Bytes l1_bytes_per_sm);

  // A read of `bytes` at `addr` (all inside one unit) by SM `sm`, arriving at `t`; returns
  // the time the data is back. `via_l1`: the load may hit in / allocate into the SM's L1.
  double read(double t, std::uint32_t sm, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor,
              bool via_l1) {
    return read_impl<false>(t, sm, addr, bytes, tensor, via_l1, 0, nullptr, 0);
  }
  // read, and in `credit_at` when its bytes come back on average if they came back in chunks
  // of `credit_group` DRAM requests, each at its last request's completion (block model).
  // `spread`: the cycles over which the bytes left the SM (its LSU) before `t`, evenly; the DRAM
  // request of each granule leaves then, as the line model's requests do line by line, rather
  // than all at `t`.
  double read_credit(double t, std::uint32_t sm, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor,
                     bool via_l1, std::uint32_t credit_group, double& credit_at, double spread = 0) {
    return read_impl<true>(t, sm, addr, bytes, tensor, via_l1, credit_group, &credit_at, spread);
  }
  // Host-side hint: the line at `addr` will be accessed soon by SM `sm`.
  void prefetch(std::uint32_t sm, core::Bytes addr) const {
    if (l2_enabled_) l2_.prefetch(unit_of(addr), near_partition(sm));
  }
  std::uint32_t near_partition(std::uint32_t sm) const { return near_[sm]; }
  // A store of `bytes` at `addr` (inside one unit); returns when it has left the L2 / DRAM queue.
  double write(double t, std::uint32_t sm, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor);
  // Writes every dirty L2 line back to HBM starting at `t` and invalidates the L2; returns when done.
  double flush(double t);
  // Functional warming (sim.mode: sampled): a read (`via_l1` as in read) or store of `bytes` at
  // `addr` (inside one unit) leaves the L1 and L2 state and the counts it would, but takes no
  // time on any port or HBM channel; its DRAM bytes load the channels as a fluid (occupy).
  void warm(std::uint32_t sm, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor, bool write, bool via_l1);
  // The DRAM bytes of the L2's write-backs so far, weighted as counted (set sampling), also those
  // of tensors whose writes count_writes_when_stored counts when stored.
  core::Bytes written_back() const { return written_back_; }
  // Bytes the L2 could still take without evicting a line (0 with the L2 off).
  core::Bytes l2_room() const {
    return l2_enabled_ ? static_cast<core::Bytes>(l2_.empty_units(warm_stride_)) * unit_bytes_ : 0;
  }
  // Set sampling of warmed loads: only the units of every warm_stride()-th L2 set are warmed
  // (those sets see every access of the launch), and a tile's counts are scaled by its sectors
  // over its warmed sectors (TileAccess::warm). The stride is the largest power of two up to
  // `stride` that divides the sets and leaves at least kMinWarmSets sets sampled; returns it.
  std::uint32_t set_warm_stride(std::uint32_t stride);
  static constexpr std::uint32_t kMinWarmSets = 64;  // sets a sampled warming keeps at least
  std::uint32_t warm_stride() const { return warm_stride_; }
  // With set sampling and the final write-back counted, the DRAM writes of a tensor stored once
  // (not core::stored_repeatedly) are its stored sectors, counted when stored: each reaches DRAM
  // once, exactly as in a full run, where the sampled sets' write-backs would only estimate it.
  void count_writes_when_stored(bool on) { writes_when_stored_ = on && warm_stride_ > 1; }
  bool in_warm_sample(core::Bytes addr) const { return warm_stride_ == 1 || l2_.in_sampled_set(unit_of(addr), warm_stride_); }
  std::uint32_t sectors_of(core::Bytes addr, std::uint32_t bytes) const {
    return sector_count(sector_mask(addr - unit_of(addr) * unit_bytes_, bytes));
  }
  // The read counts of `tensor` now, and: adds (f - 1) times what was counted since (rounded).
  struct WarmMark {
    MemoryCounters c;
    core::Bytes lts, dram, l1, untimed;
  };
  WarmMark warm_mark(core::Tensor tensor) const;
  // Sampled simulation: what was warmed since `m` (its DRAM and L2 bytes) loads the HBM channels
  // and L2 ports evenly over [t, t + duration), a skipped step's expected span, as a fluid that
  // timed accesses see as a lower rate (fluid_load.h; enable_background(true) first). Returns when
  // they could have moved the fluid of that window: skipped work takes its share of the bandwidth.
  // `l2`: the L2 ports too (skipped steps); without it only the HBM channels (CTAs skipped whole
  // load no L2 fluid, and an L2 access then skips the fluid's lookup).
  void enable_background(bool l2);
  double occupy(double t, double duration, const WarmMark& m);
  // The same for a CTA skipped whole: DRAM bytes `read` and `written` (at the write bandwidth).
  double occupy_dram(double t, double duration, double read, double written);
  void warm_scale(const WarmMark& m, core::Tensor tensor, double f);

  // Set sampling leaves the other sets without the skipped steps' lines. A tensor whose reads are
  // all timed (never warmed: e.g. read once at a CTA's first step while skipped steps stream
  // other tensors) differs there from a full run only by the evictions those lines would have
  // caused, so its timed reads hit more often than in the sampled sets, which see every access.
  // Where they miss less by 4 standard errors or more (lines as trials), its timed reads in the
  // other sets are counted at the sampled sets' rate: its DRAM reads, the L2 misses and hits
  // follow (a ratio estimate; the timing stays as run). Returns, per tensor, the factor its
  // timed DRAM reads grew by (1: unchanged), for the counts of CTAs skipped whole, which are the
  // reference CTA's. Called once, at the end of a sampled launch.
  std::array<double, core::kNumTensors> correct_timed_misses();
  static constexpr double kTimedMissZ = 4;

  bool l2_enabled() const { return l2_enabled_; }
  core::Bytes line_bytes() const { return line_bytes_; }
  // Largest access: the line, or l2.tracking_bytes in the block model.
  core::Bytes unit_bytes() const { return unit_bytes_; }
  bool block_model() const { return unit_bytes_ != line_bytes_; }
  core::Bytes granule_bytes() const { return granule_bytes_; }  // bytes per DRAM request (block model)
  // Bytes from `addr` to the end of its unit.
  core::Bytes unit_rest(core::Bytes addr) const {
    return unit_bytes_ - (unit_shift_ >= 0 ? addr & (unit_bytes_ - 1) : addr % unit_bytes_);
  }
  const MemoryCounters& counters() const { return counters_; }
  core::LevelTraffic& traffic() { return traffic_; }
  const Hbm& hbm() const { return hbm_; }
  // The previous launch's final write-back, `bytes`, occupies the channels first (l2.carry_writeback).
  void queue_writes(core::Bytes bytes) { hbm_.queue_writes(bytes); }
  double l2_busy_cycles() const { return l2_busy_cycles_for(counters_.l2_request_bytes); }  // summed over the ports
  double l2_busy_cycles_for(std::uint64_t request_bytes) const;  // for request bytes counted elsewhere
  double dma_busy_cycles() const { return 0; }  // no DMA engines

 private:
  template <bool kCredit>
  double read_impl(double t, std::uint32_t sm, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor,
                   bool via_l1, std::uint32_t credit_group, double* credit_at, double spread);
  // Writes a dirty victim back; returns when the write is done (`t` for a clean or no victim).
  double write_back(double t, const Victim& v) { return v.valid && v.dirty_mask != 0 ? write_back_dirty(t, v) : t; }
  double write_back_dirty(double t, const Victim& v);
  core::Bytes count_writeback(const Victim& v);  // its DRAM bytes and write-back count
  // Counts an L2 access of `sectors` sectors (lts sectors, hits, bytes per tensor); returns its
  // sector bytes.
  [[gnu::always_inline]] core::Bytes count_l2(const L2Outcome& o, std::uint32_t sectors, std::uint32_t near,
                                              core::Tensor tensor, bool write);
  // DRAM transfer of the sectors `mask` of `unit`, one request per interleave granule (one
  // request in the line model), granule g of the unit arriving at t + g x spacing; returns when
  // the last one is done.
  double dram_transfer(double t, std::uint64_t unit, std::uint64_t mask, bool write, std::uint32_t group = 0,
                       double* credit_at = nullptr, double spacing = 0);
  // The L2 side shared by reads and writes: looks the sectors of [addr, addr+bytes) up, counts
  // them, queues them on the partition's port and writes back any victims; `at_l2` is when the
  // port has served the request.
  struct L2Request {
    L2Outcome outcome;
    double at_l2;
  };
  // Inlined into read and write (defined in memory_system.cpp, the only user).
  [[gnu::always_inline]] L2Request l2_request(double t, std::uint32_t sm, core::Bytes addr, std::uint32_t bytes,
                                              core::Tensor tensor, bool write);
  // Shifts instead of divisions where the sizes are powers of two (they are on every preset).
  std::uint64_t unit_of(core::Bytes addr) const {
    return unit_shift_ >= 0 ? addr >> unit_shift_ : addr / unit_bytes_;
  }
  // Sectors of [off, off + bytes) inside one unit.
  std::uint64_t sector_mask(core::Bytes off, std::uint32_t bytes) const {
    const std::uint32_t first = sector_of(off);
    const std::uint32_t last = sector_of(off + bytes - 1);
    const std::uint64_t upto = last >= 63 ? ~0ull : (1ull << (last + 1)) - 1;
    return upto & ~((1ull << first) - 1);
  }
  std::uint32_t sector_of(core::Bytes off) const {
    return static_cast<std::uint32_t>(sector_shift_ >= 0 ? off >> sector_shift_ : off / sector_bytes_);
  }

  const core::DeviceSpec& device_;
  std::uint32_t sm_count_;
  bool l2_enabled_;
  core::Bytes line_bytes_;
  core::Bytes sector_bytes_;
  core::Bytes unit_bytes_;
  core::Bytes granule_bytes_;       // block model: bytes per DRAM request (line or HBM interleave)
  int unit_shift_ = -1, sector_shift_ = -1;
  std::vector<std::uint32_t> near_;  // near L2 partition of each SM
  Hbm hbm_;
  L2Cache l2_;
  std::vector<BandwidthServer> l2_ports_;  // one per partition
  FluidLoad l2_background_;                // skipped steps' L2 bytes (sampled simulation)
  double l2_bytes_per_cycle_ = 0;          // all partitions together
  bool l2_background_on_ = false;
  std::vector<L1Cache> l1_;                // one per SM
  double near_latency_, far_latency_, l1_latency_;
  // l2.wait_for_pending_fills: the arrival of the latest HBM fill of each unit, direct-mapped.
  struct PendingFill {
    std::uint64_t unit = ~std::uint64_t{0};
    double arrival = 0;
  };
  static constexpr std::size_t kPendingFills = 65536;
  std::vector<PendingFill> pending_;
  double after_fill(std::uint64_t unit, double done) const {
    if (pending_.empty()) return done;
    const PendingFill& f = pending_[unit % kPendingFills];
    return f.unit == unit ? std::max(done, f.arrival) : done;
  }
  double note_fill(std::uint64_t unit, double arrival) {
    if (!pending_.empty()) pending_[unit % kPendingFills] = {unit, arrival};
    return arrival;
  }
  MemoryCounters counters_;
  core::LevelTraffic traffic_;
  core::Bytes untimed_dram_ = 0;  // DRAM bytes of warm() accesses
  std::uint32_t warm_stride_ = 1;  // set sampling of warm()
  // Timed reads under set sampling, per tensor: [0] the other sets, [1] the sampled sets.
  struct TimedReads {
    std::uint64_t lines[2] = {0, 0}, missed[2] = {0, 0};
    core::Bytes miss_bytes[2] = {0, 0};
  };
  std::array<TimedReads, core::kNumTensors> timed_reads_{};
  std::array<bool, core::kNumTensors> warmed_reads_{};  // a read of the tensor was warmed
  bool writes_when_stored_ = false;  // count_writes_when_stored
  core::Bytes written_back_ = 0;  // written_back()
  // Counts a store's DRAM writes now where count_writes_when_stored applies to its tensor.
  void count_stored(core::Bytes addr, std::uint32_t bytes, core::Tensor tensor) {
    if (writes_when_stored_ && !core::stored_repeatedly(tensor)) [[unlikely]]
      traffic_.dram[tensor].write += static_cast<core::Bytes>(sectors_of(addr, bytes)) * sector_bytes_;
  }
};

}  // namespace attnsim::engine
