#include "sim/engine/hbm.h"

#include <bit>

namespace attnsim::engine {

Hbm::Hbm(const core::HbmSpec& spec, double clock_ghz)
    : interleave_bytes_(spec.interleave_bytes ? spec.interleave_bytes : 256),
      latency_(static_cast<double>(spec.latency_cycles)) {
  const std::uint32_t n = spec.channels ? spec.channels : 1;
  const double per_channel = spec.bandwidth_gbps / clock_ghz / n;  // bytes per SM cycle
  channels_.assign(n, BandwidthServer(per_channel));
  interleave_shift_ = std::has_single_bit(interleave_bytes_) ? std::countr_zero(interleave_bytes_) : -1;
  channel_mask_ = n > 1 && std::has_single_bit(n) ? n - 1 : 0;
}

std::uint32_t Hbm::channel_of(core::Bytes addr) const {
  // Hash all address bits above the interleave into the channel index, as memory controllers
  // do, so that strides and CTAs walking in lockstep do not pile onto a few channels.
  std::uint64_t x = interleave_shift_ >= 0 ? addr >> interleave_shift_ : addr / interleave_bytes_;
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(channel_mask_ ? x & channel_mask_ : x % channels_.size());
}

double Hbm::read(double t, core::Bytes addr, core::Bytes bytes) {
  bytes_read_ += bytes;
  return channels_[channel_of(addr)].serve(t, static_cast<double>(bytes)) + latency_;
}

double Hbm::write(double t, core::Bytes addr, core::Bytes bytes) {
  bytes_written_ += bytes;
  return channels_[channel_of(addr)].serve(t, static_cast<double>(bytes));
}

}  // namespace attnsim::engine
