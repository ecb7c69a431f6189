#include "sim/engine/event_queue.h"

#include <algorithm>

namespace attnsim::engine {

void EventQueue::push(double time, EventKind kind, std::uint32_t slot, std::uint64_t bytes) {
  Event e;
  e.time = time;
  e.seq = next_seq_++;
  e.bytes = bytes;
  e.slot = slot;
  e.kind = kind;
  std::size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    std::size_t parent = (i - 1) / kArity;
    if (!earlier(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event EventQueue::pop() {
  Event out = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return out;
  Event* h = heap_.data();
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = kArity * i + 1;
    std::size_t child;
    if (first + kArity <= n) {  // four children: a branch-free tournament (the comparisons are
                                // unpredictable, mispredicted branches dominated pop)
      const std::size_t a = first + static_cast<std::size_t>(earlier(h[first + 1], h[first]));
      const std::size_t b = first + 2 + static_cast<std::size_t>(earlier(h[first + 3], h[first + 2]));
      child = earlier(h[b], h[a]) ? b : a;
    } else {
      if (first >= n) break;
      child = first;
      for (std::size_t c = first + 1; c < n; ++c)
        if (earlier(h[c], h[child])) child = c;
    }
    if (!earlier(h[child], last)) break;
    h[i] = h[child];
    i = child;
  }
  h[i] = last;
  return out;
}

std::vector<Event> EventQueue::head(std::size_t n) const {
  std::vector<Event> out(heap_.begin(), heap_.begin() + static_cast<std::ptrdiff_t>(std::min(n, heap_.size())));
  std::sort(out.begin(), out.end(), earlier);
  return out;
}

}  // namespace attnsim::engine
