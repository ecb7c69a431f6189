// HBM as independent channels: addresses interleave across channels every interleave_bytes
// (hashed), each channel is a bandwidth server of bandwidth_gbps/channels plus a base latency.
// Leaves out banks, rows, refresh and read/write turnaround (their cost is folded into the
// configured bandwidth, which is calibrated to measured streaming rather than the datasheet).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/engine/bandwidth_server.h"

namespace attnsim::engine {

class Hbm {
 public:
  Hbm(const core::HbmSpec& spec, double clock_ghz);

  // A read of `bytes` at `addr` arriving at time `t` (SM cycles); returns when the data is
  // back at the requester: channel queueing + transfer + latency_cycles.
  double read(double t, core::Bytes addr, core::Bytes bytes);
  // A write (write-back or uncached store): occupies the channel, returns when it is done.
  double write(double t, core::Bytes addr, core::Bytes bytes);

  std::uint32_t channel_of(core::Bytes addr) const;
  core::Bytes bytes_read() const { return bytes_read_; }
  core::Bytes bytes_written() const { return bytes_written_; }
  std::uint32_t channels() const { return static_cast<std::uint32_t>(channels_.size()); }

 private:
  std::vector<BandwidthServer> channels_;
  core::Bytes interleave_bytes_;
  int interleave_shift_ = -1;        // log2(interleave_bytes_) when a power of two
  std::uint64_t channel_mask_ = 0;   // channels - 1 when a power of two above one
  double latency_;
  core::Bytes bytes_read_ = 0;
  core::Bytes bytes_written_ = 0;
};

}  // namespace attnsim::engine
