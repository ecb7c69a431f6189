// A bandwidth server: a resource that moves `bytes_per_cycle` and serves requests in arrival
// order (a request starts at max(arrival, free time)). No priorities, no preemption.
#pragma once

#include <algorithm>

namespace attnsim::engine {

class BandwidthServer {
 public:
  BandwidthServer() = default;
  explicit BandwidthServer(double units_per_cycle)
      : cycles_per_unit_(units_per_cycle > 0 ? 1.0 / units_per_cycle : 0.0) {}

  // Occupies the server for `units` (bytes, wavefronts, FLOP) from max(arrival, free time);
  // returns the time the last unit leaves it.
  double serve(double arrival, double units) {
    const double start = std::max(arrival, free_at_);
    free_at_ = start + units * cycles_per_unit_;
    return free_at_;
  }
  // Occupies the server for `cycles` from max(arrival, free time) whatever its rate; returns the end.
  double hold(double arrival, double cycles) {
    free_at_ = std::max(arrival, free_at_) + cycles;
    return free_at_;
  }
  double free_at() const { return free_at_; }

 private:
  double cycles_per_unit_ = 0;
  double free_at_ = 0;
};

}  // namespace attnsim::engine
