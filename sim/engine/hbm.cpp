#include "sim/engine/hbm.h"

#include "sim/engine/set_assoc_array.h"  // sector_count

#include <bit>

namespace attnsim::engine {

Hbm::Hbm(const core::HbmSpec& spec, double clock_ghz)
    : interleave_bytes_(spec.interleave_bytes ? spec.interleave_bytes : 256),
      latency_(static_cast<double>(spec.latency_cycles)) {
  const std::uint32_t n = spec.channels ? spec.channels : 1;
  const double per_channel = spec.bandwidth_gbps / clock_ghz / n;  // bytes per SM cycle
  const double write_gbps = spec.write_bandwidth_gbps > 0 ? spec.write_bandwidth_gbps : spec.bandwidth_gbps;
  const double write_per_channel = write_gbps / clock_ghz / n;
  free_.assign(n, 0.0);
  cycles_per_byte_ = per_channel > 0 ? 1.0 / per_channel : 0.0;
  write_cycles_per_byte_ = write_per_channel > 0 ? 1.0 / write_per_channel : 0.0;
  interleave_shift_ = std::has_single_bit(interleave_bytes_) ? std::countr_zero(interleave_bytes_) : -1;
  channel_mask_ = n > 1 && std::has_single_bit(n) ? n - 1 : 0;
  channel_mod_ = FastModulo(n);
}

double Hbm::transfer(double t, core::Bytes base, std::uint64_t mask, std::uint32_t per, core::Bytes granule,
                     core::Bytes sector, bool write, std::uint32_t group, double* credit_at, double spacing) {
  const std::uint64_t gmask = per >= 64 ? ~0ull : (1ull << per) - 1;
  const double cycles_per_byte = rate_at(t, write ? write_cycles_per_byte_ : cycles_per_byte_);
  double done = t;
  core::Bytes moved = 0;
  double group_last = t, weighted = 0;  // credit_at: the open group's last completion, sum of bytes x last
  core::Bytes group_bytes = 0;
  std::uint32_t in_group = 0;
  // Whole granules from the first (a missing or written-back whole unit, the common case): no
  // masks to look at.
  const std::uint32_t low_ones = mask == ~0ull ? 64 : static_cast<std::uint32_t>(__builtin_ctzll(~mask));
  if (mask != 0 && (mask & (mask + 1)) == 0 && per < 64 && low_ones % per == 0) {
    const std::uint32_t n = low_ones / per;
    const double cost = static_cast<double>(granule) * cycles_per_byte;
    const std::uint32_t step = credit_at && group > 0 ? group : n;  // requests per credit group
    // The loop once per way of reducing the hash to a channel (no branch per granule).
    auto whole = [&](auto channel) {
      for (std::uint32_t g0 = 0; g0 < n; g0 += step) {
        const std::uint32_t g1 = std::min(n, g0 + step);
        double last = t;
        for (std::uint32_t g = g0; g < g1; ++g) {  // serve() with its product hoisted
          double& free = free_[channel(mixed(base + static_cast<core::Bytes>(g) * granule))];
          free = std::max(t + static_cast<double>(g) * spacing, free) + cost;
          last = std::max(last, free);
        }
        done = std::max(done, last);
        weighted += static_cast<double>(static_cast<core::Bytes>(g1 - g0) * granule) * last;
      }
    };
    if (channel_mask_) whole([m = channel_mask_](std::uint64_t x) { return x & m; });
    else if (channel_mod_.narrow()) whole([this](std::uint64_t x) { return channel_mod_.narrow_mod(x); });
    else whole([this](std::uint64_t x) { return channel_mod_(x); });
    latest_ = std::max(latest_, done);  // done >= every free_ set above
    moved = static_cast<core::Bytes>(n) * granule;
    mask = 0;
  }
  double arrival = t;  // of the granule at `a`
  for (core::Bytes a = base; mask != 0; a += granule, mask = per >= 64 ? 0 : mask >> per, arrival += spacing) {
    const std::uint64_t m = mask & gmask;
    if (m == 0) continue;
    // A whole granule (the common case) needs no sector count.
    const core::Bytes bytes = m == gmask ? granule : sector_count(m) * sector;
    moved += bytes;
    const double end = serve(channel_of(a), arrival, bytes, cycles_per_byte);
    done = std::max(done, end);
    if (credit_at) {
      group_last = std::max(group_last, end);
      group_bytes += bytes;
      if (++in_group == group) {
        weighted += static_cast<double>(group_bytes) * group_last;
        group_last = t;
        group_bytes = 0;
        in_group = 0;
      }
    }
  }
  if (moved == 0) {
    if (credit_at) *credit_at = t;
    return t;
  }
  const double latency = write ? 0.0 : latency_;
  if (credit_at) {
    weighted += static_cast<double>(group_bytes) * group_last;
    *credit_at = weighted / static_cast<double>(moved) + latency;
  }
  (write ? bytes_written_ : bytes_read_) += moved;
  return done + latency;
}

}  // namespace attnsim::engine
