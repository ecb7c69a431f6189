// The progress guard: counts events since a tile op last retired and since simulated time last
// moved; past the limit (EngineOptions::stall_limit_events) it names the reason, and the launch
// throws a core::SimError that dumps its queue and CTAs, instead of hanging.
#pragma once

#include <cstdint>

namespace attnsim::engine {

class ProgressGuard {
 public:
  explicit ProgressGuard(std::uint64_t limit_events) : limit_(limit_events) {}

  void note_progress() { since_progress_ = 0; }  // a tile op retired
  // Called once per event and per op step at simulated time `now`: nullptr, or why the
  // simulation is stuck.
  const char* check(double now) {
    const char* why = nullptr;
    if (now != last_time_) {
      last_time_ = now;
      since_time_moved_ = 0;
    } else if (++since_time_moved_ > limit_) {
      why = "simulated time stopped advancing";
    }
    if (why == nullptr && ++since_progress_ > limit_) why = "no tile operation retired";
    return why;
  }
  std::uint64_t limit() const { return limit_; }

 private:
  std::uint64_t limit_;
  std::uint64_t since_progress_ = 0;
  std::uint64_t since_time_moved_ = 0;
  double last_time_ = -1;
};

}  // namespace attnsim::engine
