// The DMA engines of a scratchpad device.
#include "sim/engine/scratchpad_memory.h"

#include <algorithm>
#include <bit>

namespace attnsim::engine {

ScratchpadMemory::ScratchpadMemory(const core::DeviceSpec& device, core::Bytes /*l1_bytes_per_sm*/)
    : device_(device),
      line_bytes_(device.l2.line_bytes ? device.l2.line_bytes : 128),
      engines_(std::max<std::uint32_t>(1, device.scratchpad.dma_engines)),
      dma_latency_(static_cast<double>(device.scratchpad.dma_latency_cycles)),
      hbm_(device.hbm, device.clock_ghz),
      dma_(static_cast<std::size_t>(device.sm.count) * engines_, BandwidthServer(device.scratchpad.dma_bytes_per_cycle)) {
  line_shift_ = std::has_single_bit(line_bytes_) ? std::countr_zero(line_bytes_) : -1;
}

double ScratchpadMemory::dma(double t, std::uint32_t core, core::Bytes bytes) {
  BandwidthServer* best = &dma_[static_cast<std::size_t>(core) * engines_];
  for (std::uint32_t e = 1; e < engines_; ++e) {
    BandwidthServer* s = &dma_[static_cast<std::size_t>(core) * engines_ + e];
    if (s->free_at() < best->free_at()) best = s;
  }
  return best->serve(t, static_cast<double>(bytes)) + dma_latency_;
}

double ScratchpadMemory::dma_busy_cycles() const {
  // Every HBM byte read or written also passes one DMA engine (read, write).
  if (device_.scratchpad.dma_bytes_per_cycle <= 0) return 0;
  return static_cast<double>(hbm_.bytes_read() + hbm_.bytes_written()) / device_.scratchpad.dma_bytes_per_cycle;
}

}  // namespace attnsim::engine
