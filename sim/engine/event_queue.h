// The engine's clock: events ordered by (time, sequence number). Ties are broken by insertion
// order, so runs are deterministic; no per-event allocation once warm.
//
// A calendar queue (Brown 1988) rather than a heap: simulated time only moves forward and most
// events land a few hundred cycles ahead (load completions, credit returns, pipe finishes), so
// events go into a ring of buckets of kBucketCycles cycles each covering the next
// kBuckets * kBucketCycles cycles, with a bitmap of the non-empty buckets; events further out wait
// in a binary heap and move into the ring as the cursor approaches them. A pop finds the first
// non-empty bucket from the cursor and takes the (time, sequence)-smallest event in it, so the
// order is exactly that of a sorted queue (tests/engine/set_assoc_array_test.cpp checks it against
// one).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace attnsim::engine {

enum class EventKind : std::uint8_t {
  kResume,  // a warp group of a CTA slot continues executing its ops
  kCredit,  // a chunk of a slot's global loads completed: return in-flight credits
  kSample,  // take one time-series sample
};

struct Event {
  double time = 0;          // SM cycles
  std::uint64_t seq = 0;    // insertion order, breaks ties
  std::uint64_t bytes = 0;  // kCredit: bytes to return; kResume: the warp group
  std::uint32_t slot = 0;   // CTA slot the event belongs to
  EventKind kind = EventKind::kResume;
};

class EventQueue {
 public:
  EventQueue();
  void reserve(std::size_t n) { nodes_.reserve(n); }
  // `time` must not be earlier than the last popped event's (the engine never schedules into
  // the past); such an event is still popped in the right order relative to the others queued.
  void push(double time, EventKind kind, std::uint32_t slot, std::uint64_t bytes = 0);
  Event pop();  // precondition: !empty()
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  std::uint64_t pushed() const { return next_seq_; }
  // The first `n` events in time order (for error dumps; not a hot path).
  std::vector<Event> head(std::size_t n) const;

 private:
  static constexpr std::size_t kBuckets = 8192;  // power of two
  static constexpr double kBucketCycles = 1.0;
  static constexpr std::size_t kWords = kBuckets / 64;
  static constexpr std::uint32_t kNil = 0xffffffffu;
  static bool earlier(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  static std::uint64_t bucket_of(double t) { return t > 0 ? static_cast<std::uint64_t>(t / kBucketCycles) : 0; }
  struct Node {  // a ring event: nodes come from one pool (a free list), buckets are lists
    Event e;
    std::uint32_t next = kNil;
  };
  void put(const Event& e, std::uint64_t bucket);
  void migrate();  // far events now inside the ring's window move into it
  std::size_t next_nonempty() const;  // distance from the cursor to the first non-empty bucket

  std::vector<std::uint32_t> head_;           // first node of each ring bucket
  std::vector<Node> nodes_;
  std::uint32_t free_ = kNil;                 // free list through Node::next
  std::array<std::uint64_t, kWords> bits_{};  // non-empty ring buckets
  std::uint64_t cursor_ = 0;                  // absolute bucket of the last pop
  std::size_t in_ring_ = 0;
  std::vector<Event> far_;                    // min-heap (std::push_heap with `later`)
  std::size_t size_ = 0;
  std::uint64_t next_seq_ = 0;
};

}  // namespace attnsim::engine
