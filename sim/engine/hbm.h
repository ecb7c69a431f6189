// HBM as independent channels: addresses interleave across channels every interleave_bytes
// (hashed), each channel is a bandwidth server of bandwidth_gbps/channels for reads
// (write_bandwidth_gbps/channels for writes and write-backs) plus a base latency for reads.
// Leaves out banks, rows, refresh and read/write turnaround (their cost is folded into the two
// configured bandwidths, calibrated to measured streaming and copying rather than the datasheet).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/engine/fluid_load.h"

namespace attnsim::engine {

// x % d for a divisor fixed at run time, without a division instruction (a 64-bit `div` is the
// longest-latency step of a channel lookup): with c = ceil(2^128 / d), x % d is the high 64 bits
// of (c * x mod 2^128) * d / 2^64, exactly for every 64-bit x and every d >= 1 (Lemire, Kaser and
// Kurz, "Faster remainder by direct computation", 2019, Theorem 1 with F = 128, N = 64).
//
// narrow_mod: for d = 2^k * m (m odd) with k >= ceil(log2 m), such as the channel counts 192 =
// 2^6 * 3, 80 and 96, x % d is x's low k bits beside (x >> k) % m, and x >> k has 64 - k bits, so
// the same theorem with F = 64 gives it from two 64-bit multiplications (narrow() says whether d
// is of that form).
class FastModulo {
 public:
  FastModulo() = default;
  explicit FastModulo(std::uint64_t d) : d_(d ? d : 1), c_(~__uint128_t{0} / d_ + 1) {
    shift_ = static_cast<unsigned>(__builtin_ctzll(d_));
    odd_ = d_ >> shift_;
    narrow_ = odd_ == 1 || shift_ >= static_cast<unsigned>(64 - __builtin_clzll(odd_ - 1));
    c64_ = odd_ == 1 ? 0 : ~std::uint64_t{0} / odd_ + 1;  // ceil(2^64 / m); 2^64 mod 2^64 for m = 1
  }
  bool narrow() const { return narrow_; }
  std::uint64_t narrow_mod(std::uint64_t x) const {  // x % d, when narrow()
    const std::uint64_t low = c64_ * (x >> shift_);  // the fraction of (x >> k) / m, scaled by 2^64
    const std::uint64_t r = static_cast<std::uint64_t>((static_cast<__uint128_t>(low) * odd_) >> 64);
    return (r << shift_) | (x & ((std::uint64_t{1} << shift_) - 1));
  }
  std::uint64_t operator()(std::uint64_t x) const {
    const __uint128_t low = c_ * x;  // the fractional part of x / d, scaled by 2^128
    const __uint128_t bottom = static_cast<__uint128_t>(static_cast<std::uint64_t>(low)) * d_;
    const __uint128_t top = static_cast<__uint128_t>(static_cast<std::uint64_t>(low >> 64)) * d_;
    return static_cast<std::uint64_t>((top + (bottom >> 64)) >> 64);
  }

 private:
  std::uint64_t d_ = 1;
  __uint128_t c_ = 0;  // ceil(2^128 / d); 0 (2^128 mod 2^128) for d = 1
  std::uint64_t odd_ = 1, c64_ = 0;  // d = 2^shift_ * odd_; c64_ = ceil(2^64 / odd_)
  unsigned shift_ = 0;
  bool narrow_ = true;
};

class Hbm {
 public:
  Hbm(const core::HbmSpec& spec, double clock_ghz);

  // A read of `bytes` at `addr` arriving at time `t` (SM cycles); returns when the data is
  // back at the requester: channel queueing + transfer + latency_cycles.
  double read(double t, core::Bytes addr, core::Bytes bytes) {
    bytes_read_ += bytes;
    return serve(channel_of(addr), t, bytes, rate_at(t, cycles_per_byte_)) + latency_;
  }
  // A write (write-back or uncached store): occupies the channel, at the write bandwidth, and
  // returns when it is done.
  double write(double t, core::Bytes addr, core::Bytes bytes) {
    bytes_written_ += bytes;
    return serve(channel_of(addr), t, bytes, rate_at(t, write_cycles_per_byte_));
  }
  // One read (or write) per `granule_bytes` granule from `base` whose group of
  // `sectors_per_granule` bits in `mask` is not empty, of its sectors' bytes, granule g (counted
  // from `base`) arriving at t + g x `spacing`; returns when the last is done (as read / write
  // would, one granule at a time). With `credit_at`, also the bytes-weighted mean, over
  // consecutive groups of `group` requests, of each group's last completion (when the bytes
  // would come back in chunks of `group`).
  double transfer(double t, core::Bytes base, std::uint64_t mask, std::uint32_t sectors_per_granule,
                  core::Bytes granule_bytes, core::Bytes sector_bytes, bool write, std::uint32_t group = 0,
                  double* credit_at = nullptr, double spacing = 0);

  std::uint32_t channel_of(core::Bytes addr) const {
    const std::uint64_t x = mixed(addr);
    return static_cast<std::uint32_t>(channel_mask_ ? x & channel_mask_ : channel_mod_(x));
  }
  core::Bytes bytes_read() const { return bytes_read_; }
  core::Bytes bytes_written() const { return bytes_written_; }
  // Cycles the channels have been busy, summed over channels: every byte occupies its channel
  // for cycles_per_byte (reads) or write_cycles_per_byte (writes), so the sum follows from the
  // byte totals.
  double busy_cycles() const { return busy_cycles_for(bytes_read_, bytes_written_); }
  // The same for byte totals counted elsewhere (a sampled launch's, which count skipped work
  // that never reached the channels).
  double busy_cycles_for(core::Bytes read, core::Bytes written) const {
    return static_cast<double>(read) * cycles_per_byte_ + static_cast<double>(written) * write_cycles_per_byte_;
  }
  std::uint32_t channels() const { return static_cast<std::uint32_t>(free_.size()); }
  // Writes of `bytes` queued at time 0 before anything else, spread evenly over the channels (the
  // previous launch's final write-back, l2.carry_writeback; the address hash spreads its lines
  // evenly). Not counted in bytes_written(): the launch that wrote them counted them.
  void queue_writes(core::Bytes bytes) {
    const double each = static_cast<double>(bytes) / static_cast<double>(free_.size()) * write_cycles_per_byte_;
    for (double& f : free_) f = std::max(f, each);
    latest_ = std::max(latest_, each);
  }
  // Sampled simulation: the DRAM bytes of skipped steps load the channels as a fluid
  // (fluid_load.h), `bytes` spread over [t, t + duration); timed accesses then run at the rate
  // the fluid leaves them.
  void enable_background() {
    if (cycles_per_byte_ <= 0) return;
    background_ = FluidLoad(static_cast<double>(free_.size()) / cycles_per_byte_);
    background_on_ = true;
  }
  // CTAs skipped whole: their bytes (in read bytes) join one backlog that the channels drain at
  // their full rate; returns when the backlog, these bytes included, is drained. So skipped CTAs
  // cannot move bytes faster than the channels can, whatever their reference's time.
  double add_backlog(double t, double bytes) {
    const double capacity = static_cast<double>(free_.size()) / cycles_per_byte_;
    backlog_ = std::max(0.0, backlog_ - (t - backlog_t_) * capacity) + bytes;
    backlog_t_ = t;
    return t + backlog_ / capacity;
  }
  // A written byte's channel time in read bytes' (the fluid is counted in read bytes).
  double write_weight() const { return cycles_per_byte_ > 0 ? write_cycles_per_byte_ / cycles_per_byte_ : 1.0; }
  // Returns when the channels could have moved the fluid of [t - duration, t) and the timed
  // work queued at t (the mean backlog of the channels). Each timed byte held its channel
  // 1 / (1 - u) as long (rate_at), the fluid's share u already in it; the backlog counts at the
  // rate the timed bytes alone take (divided by that factor at t), or the fluid would count twice.
  double add_background(double t, double duration, core::Bytes bytes) {
    double queued = 0;
    if (latest_ > t)  // else every channel is free by t: each term is 0
      for (const double f : free_) queued += std::max(0.0, f - t);
    queued /= static_cast<double>(free_.size()) * background_.factor(t);  // before this step's fluid joins
    return background_.add(t, duration, static_cast<double>(bytes)) + queued;
  }

 private:
  // Hash all address bits above the interleave, as memory controllers do, so that strides and
  // CTAs walking in lockstep do not pile onto a few channels; the channel is this modulo channels.
  std::uint64_t mixed(core::Bytes addr) const {
    std::uint64_t x = interleave_shift_ >= 0 ? addr >> interleave_shift_ : addr / interleave_bytes_;
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
  }
  // Channel `c` moves `bytes` from max(arrival, its free time); returns when it is done.
  double serve(std::uint32_t c, double t, core::Bytes bytes, double cycles_per_byte) {
    const double start = std::max(t, free_[c]);
    free_[c] = start + static_cast<double>(bytes) * cycles_per_byte;
    latest_ = std::max(latest_, free_[c]);
    return free_[c];
  }


  // Cycles per byte at `t`: `cycles_per_byte`, longer where skipped steps' fluid takes its share.
  double rate_at(double t, double cycles_per_byte) const {
    if (background_on_) [[unlikely]] return cycles_per_byte * background_.factor(t);
    return cycles_per_byte;
  }

  std::vector<double> free_;          // per channel: when it is free again
  double latest_ = 0;                 // no channel is busy after this (the latest free_ ever set)
  FluidLoad background_;              // skipped steps' DRAM bytes (sampled simulation; off otherwise)
  double backlog_ = 0, backlog_t_ = 0;  // CTAs skipped whole: bytes not yet moved, as of backlog_t_
  bool background_on_ = false;
  double cycles_per_byte_ = 0;        // per channel (all channels alike): reads
  double write_cycles_per_byte_ = 0;  // writes (HbmSpec::write_bandwidth_gbps)
  core::Bytes interleave_bytes_;
  int interleave_shift_ = -1;        // log2(interleave_bytes_) when a power of two
  std::uint64_t channel_mask_ = 0;   // channels - 1 when a power of two above one
  FastModulo channel_mod_;           // % channels otherwise
  double latency_;
  core::Bytes bytes_read_ = 0;
  core::Bytes bytes_written_ = 0;
};

}  // namespace attnsim::engine
