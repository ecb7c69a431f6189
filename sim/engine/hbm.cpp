#include "sim/engine/hbm.h"

#include <bit>

namespace attnsim::engine {

Hbm::Hbm(const core::HbmSpec& spec, double clock_ghz)
    : interleave_bytes_(spec.interleave_bytes ? spec.interleave_bytes : 256),
      latency_(static_cast<double>(spec.latency_cycles)) {
  const std::uint32_t n = spec.channels ? spec.channels : 1;
  const double per_channel = spec.bandwidth_gbps / clock_ghz / n;  // bytes per SM cycle
  free_.assign(n, 0.0);
  cycles_per_byte_ = per_channel > 0 ? 1.0 / per_channel : 0.0;
  interleave_shift_ = std::has_single_bit(interleave_bytes_) ? std::countr_zero(interleave_bytes_) : -1;
  channel_mask_ = n > 1 && std::has_single_bit(n) ? n - 1 : 0;
}

double Hbm::transfer(double t, core::Bytes base, std::uint64_t mask, std::uint32_t per, core::Bytes granule,
                     core::Bytes sector, bool write) {
  const std::uint64_t gmask = per >= 64 ? ~0ull : (1ull << per) - 1;
  double done = t;
  core::Bytes moved = 0;
  for (core::Bytes a = base; mask != 0; a += granule, mask = per >= 64 ? 0 : mask >> per) {
    const std::uint64_t m = mask & gmask;
    if (m == 0) continue;
    // A whole granule (the common case) needs no sector count.
    core::Bytes bytes = granule;
    if (m != gmask) {
      std::uint32_t n = 0;
      for (std::uint64_t k = m; k != 0; k &= k - 1) ++n;
      bytes = n * sector;
    }
    moved += bytes;
    done = std::max(done, serve(channel_of(a), t, bytes));
  }
  if (moved == 0) return t;
  if (write) {
    bytes_written_ += moved;
    return done;
  }
  bytes_read_ += moved;
  return done + latency_;
}

}  // namespace attnsim::engine
