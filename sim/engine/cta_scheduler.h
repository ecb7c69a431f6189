// The CTA scheduler: places a launch on the device (how many CTAs fit on an SM: the occupancy
// calculator, or SRAM per core on a scratchpad device) and hands out the grid's CTAs in order:
// the first wave round-robin over SMs (CTA i on SM i mod count, filling each SM's slots round by
// round), then each further CTA to the slot that frees first. Rasterization (which tile a CTA
// number is) is the kernel's business. Leaves out CTA dispatch latency and sampled simulation.
#pragma once

#include <cstdint>
#include <deque>

#include "sim/core/device_spec.h"
#include "sim/core/occupancy.h"
#include "sim/core/tile_program.h"

namespace attnsim::engine {

class CtaScheduler {
 public:
  // Throws core::ConfigError if a CTA (or a cluster) cannot be placed on the device at all.
  CtaScheduler(const core::DeviceSpec& device, const core::LaunchShape& shape);

  const core::OccupancyResult& occupancy() const { return occupancy_; }
  std::uint32_t slots_per_sm() const { return slots_per_sm_; }
  std::uint64_t num_ctas() const { return num_ctas_; }
  std::uint64_t retired() const { return retired_; }
  bool has_next() const { return next_ < num_ctas_; }
  bool done() const { return retired_ >= num_ctas_; }
  std::uint64_t take_next() { return next_++; }  // precondition: has_next()
  void retire_one() { ++retired_; }
  // Calls f(slot, sm) for every slot, in the order the first wave fills them (slot k of
  // SM 0, 1, ..., sms - 1 for k = 0, 1, ...); slot = sm * slots_per_sm + k.
  template <class F>
  void for_each_slot_in_wave_order(std::uint32_t sms, F&& f) const {
    for (std::uint32_t k = 0; k < slots_per_sm_; ++k)
      for (std::uint32_t m = 0; m < sms; ++m) f(m * slots_per_sm_ + k, m);
  }
  // Thread-block clusters (LaunchShape::cluster_size > 1) are placed all or none: free slots wait
  // in a pool (in the order they were freed) until a whole cluster fits.
  std::uint32_t cluster_size() const { return cluster_size_; }
  void free_slot(std::uint32_t slot) { pool_.push_back(slot); }
  bool cluster_fits() const { return has_next() && pool_.size() >= cluster_size_; }
  std::uint32_t take_slot() {  // precondition: cluster_fits()
    const std::uint32_t s = pool_.front();
    pool_.pop_front();
    return s;
  }
  // Grid size over the CTAs resident at once on `sms` SMs.
  double waves(std::uint32_t sms) const {
    return static_cast<double>(num_ctas_) / (static_cast<double>(slots_per_sm_) * static_cast<double>(sms));
  }

 private:
  core::OccupancyResult occupancy_;
  std::uint32_t slots_per_sm_ = 1;
  std::uint64_t num_ctas_ = 0;
  std::uint64_t next_ = 0;
  std::uint64_t retired_ = 0;
  std::uint32_t cluster_size_ = 1;
  std::deque<std::uint32_t> pool_;
};

}  // namespace attnsim::engine
