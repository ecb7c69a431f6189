// The global-memory path of a scratchpad device (kind: scratchpad, TPU-like): software-managed
// SRAM per core fed by per-core DMA engines from HBM, no caches. Every access reaches HBM with its
// exact bytes and passes one of its core's DMA engines (the least busy); it is back when both the
// engine and the HBM channel have served it, plus the DMA latency. The same interface as
// MemorySystem (the GPU caches), so the launch simulator is built for one or the other
// (LaunchSimulator<Memory>) and the access path has no per-access device branch.
// Leaves out DMA descriptor setup, SRAM bank conflicts on DMA writes and HBM-to-HBM copies.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/engine/bandwidth_server.h"
#include "sim/engine/hbm.h"
#include "sim/engine/memory_system.h"

namespace attnsim::engine {

class ScratchpadMemory {
 public:
  // No L1: `l1_bytes_per_sm` is ignored (the signature is MemorySystem's).
  ScratchpadMemory(const core::DeviceSpec& device, core::Bytes l1_bytes_per_sm);

  // A read of `bytes` at `addr` (inside one line) by core `core` at `t`; returns when it is in SRAM.
  double read(double t, std::uint32_t core, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor,
              bool /*via_l1*/) {
    traffic_.dram[tensor].read += bytes;
    traffic_.lts[tensor].read += bytes;
    counters_.lts_bytes += bytes;
    const double dma_done = dma(t, core, bytes);
    return std::max(dma_done, hbm_.read(t, addr, bytes));
  }
  // Never called (no block model: block_model() is false); here for the common interface.
  double read_credit(double t, std::uint32_t core, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor,
                     bool via_l1, std::uint32_t /*credit_group*/, double& credit_at, double /*spread*/ = 0) {
    return credit_at = read(t, core, addr, bytes, tensor, via_l1);
  }
  void prefetch(std::uint32_t, core::Bytes) const {}
  // A store of `bytes` at `addr` (inside one line); returns when HBM and the DMA engine are done.
  double write(double t, std::uint32_t core, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor) {
    traffic_.lts[tensor].write += bytes;
    traffic_.dram[tensor].write += bytes;
    counters_.lts_bytes += bytes;
    const double done = hbm_.write(t, addr, bytes);
    return std::max(done, dma(t, core, bytes));
  }
  double flush(double t) { return t; }  // nothing cached
  // MemorySystem::warm: the counts of an access without its time.
  void warm(std::uint32_t, core::Bytes, std::uint32_t bytes, core::Tensor tensor, bool write, bool) {
    (write ? traffic_.lts[tensor].write : traffic_.lts[tensor].read) += bytes;
    (write ? traffic_.dram[tensor].write : traffic_.dram[tensor].read) += bytes;
    counters_.lts_bytes += bytes;
  }
  core::Bytes written_back() const { return 0; }  // no L2: every write goes to DRAM as it is made
  core::Bytes l2_room() const { return 0; }
  // No cache: every access is warmed and counted (MemorySystem's set sampling does not apply).
  std::uint32_t set_warm_stride(std::uint32_t) { return 1; }
  void count_writes_when_stored(bool) {}  // no set sampling: every write is counted
  std::uint32_t warm_stride() const { return 1; }
  bool in_warm_sample(core::Bytes) const { return true; }
  std::uint32_t sectors_of(core::Bytes, std::uint32_t bytes) const { return bytes; }
  struct WarmMark {};
  WarmMark warm_mark(core::Tensor) const { return {}; }
  void warm_scale(const WarmMark&, core::Tensor, double) {}
  void enable_background(bool) {}
  double occupy(double t, double, const WarmMark&) { return t; }
  double occupy_dram(double t, double, double, double) { return t; }

  bool l2_enabled() const { return false; }
  core::Bytes line_bytes() const { return line_bytes_; }
  core::Bytes unit_bytes() const { return line_bytes_; }
  bool block_model() const { return false; }
  core::Bytes granule_bytes() const { return line_bytes_; }
  core::Bytes unit_rest(core::Bytes addr) const {
    return line_bytes_ - (line_shift_ >= 0 ? addr & (line_bytes_ - 1) : addr % line_bytes_);
  }
  const MemoryCounters& counters() const { return counters_; }
  core::LevelTraffic& traffic() { return traffic_; }
  const Hbm& hbm() const { return hbm_; }
  double l2_busy_cycles() const { return 0; }
  double l2_busy_cycles_for(std::uint64_t) const { return 0; }
  double dma_busy_cycles() const;  // summed over the DMA engines

 private:
  double dma(double t, std::uint32_t core, core::Bytes bytes);

  const core::DeviceSpec& device_;
  core::Bytes line_bytes_;
  int line_shift_ = -1;
  std::uint32_t engines_;
  double dma_latency_;
  Hbm hbm_;
  std::vector<BandwidthServer> dma_;  // engines, core-major
  MemoryCounters counters_;           // only lts_bytes: there is no cache
  core::LevelTraffic traffic_;
};

}  // namespace attnsim::engine
