// A 4-ary min-heap of small POD events ordered by (time, sequence number): the engine's clock.
// Ties are broken by insertion order, so runs are deterministic; no per-event allocation once warm.
#pragma once

#include <cstdint>
#include <vector>

namespace attnsim::engine {

enum class EventKind : std::uint8_t {
  kResume,  // a CTA slot continues executing its ops
  kCredit,  // a chunk of a slot's global loads completed: return in-flight credits
  kSample,  // take one time-series sample
};

struct Event {
  double time = 0;          // SM cycles
  std::uint64_t seq = 0;    // insertion order, breaks ties
  std::uint64_t bytes = 0;  // kCredit: bytes to return
  std::uint32_t slot = 0;   // CTA slot the event belongs to
  EventKind kind = EventKind::kResume;
};

class EventQueue {
 public:
  void reserve(std::size_t n) { heap_.reserve(n); }
  void push(double time, EventKind kind, std::uint32_t slot, std::uint64_t bytes = 0);
  Event pop();  // precondition: !empty()
  const Event& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::uint64_t pushed() const { return next_seq_; }
  // The first `n` events in heap-array order (a cheap look at the queue head for error dumps).
  std::vector<Event> head(std::size_t n) const;

 private:
  static constexpr std::size_t kArity = 4;  // shallower than a binary heap: fewer cache misses per pop
  static bool earlier(const Event& a, const Event& b) {  // bitwise: no short-circuit branches
    return (a.time < b.time) | ((a.time == b.time) & (a.seq < b.seq));
  }
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace attnsim::engine
