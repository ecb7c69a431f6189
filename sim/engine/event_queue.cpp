#include "sim/engine/event_queue.h"

#include <algorithm>

namespace attnsim::engine {

namespace {
bool later(const Event& a, const Event& b) {  // heap order for std::push_heap: smallest on top
  return a.time > b.time || (a.time == b.time && a.seq > b.seq);
}
}  // namespace

EventQueue::EventQueue() : head_(kBuckets, kNil) {}

void EventQueue::put(const Event& e, std::uint64_t bucket) {
  std::uint32_t n = free_;
  if (n != kNil) {
    free_ = nodes_[n].next;
  } else {
    n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  const std::size_t i = static_cast<std::size_t>(bucket & (kBuckets - 1));
  nodes_[n].e = e;
  nodes_[n].next = head_[i];
  head_[i] = n;
  bits_[i >> 6] |= std::uint64_t{1} << (i & 63);
  ++in_ring_;
}

void EventQueue::push(double time, EventKind kind, std::uint32_t slot, std::uint64_t bytes) {
  Event e;
  e.time = time;
  e.seq = next_seq_++;
  e.bytes = bytes;
  e.slot = slot;
  e.kind = kind;
  ++size_;
  const std::uint64_t b = std::max(bucket_of(time), cursor_);
  if (b < cursor_ + kBuckets) {
    put(e, b);
  } else {
    far_.push_back(e);
    std::push_heap(far_.begin(), far_.end(), later);
  }
}

void EventQueue::migrate() {
  while (!far_.empty() && bucket_of(far_.front().time) < cursor_ + kBuckets) {
    std::pop_heap(far_.begin(), far_.end(), later);
    put(far_.back(), bucket_of(far_.back().time));
    far_.pop_back();
  }
}

std::size_t EventQueue::next_nonempty() const {
  const std::size_t start = static_cast<std::size_t>(cursor_ & (kBuckets - 1));
  std::size_t w = start >> 6;
  std::uint64_t m = bits_[w] & (~std::uint64_t{0} << (start & 63));
  for (std::size_t k = 0; k <= kWords; ++k) {
    if (m != 0) {
      const std::size_t i = (w << 6) + static_cast<std::size_t>(__builtin_ctzll(m));
      return (i - start) & (kBuckets - 1);
    }
    w = (w + 1) % kWords;
    m = bits_[w];
  }
  return 0;  // unreachable while in_ring_ > 0
}

Event EventQueue::pop() {
  if (in_ring_ == 0) {  // everything is far out: jump the cursor to it
    cursor_ = bucket_of(far_.front().time);
    migrate();
  }
  const std::size_t d = next_nonempty();
  if (d != 0) {
    cursor_ += d;
    migrate();
  }
  const std::size_t i = static_cast<std::size_t>(cursor_ & (kBuckets - 1));
  std::uint32_t* best = &head_[i];  // link pointing at the smallest node
  for (std::uint32_t* link = &nodes_[head_[i]].next; *link != kNil; link = &nodes_[*link].next)
    if (earlier(nodes_[*link].e, nodes_[*best].e)) best = link;
  const std::uint32_t n = *best;
  const Event out = nodes_[n].e;
  *best = nodes_[n].next;
  nodes_[n].next = free_;
  free_ = n;
  if (head_[i] == kNil) bits_[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
  --in_ring_;
  --size_;
  return out;
}

std::vector<Event> EventQueue::head(std::size_t n) const {
  std::vector<Event> all(far_.begin(), far_.end());
  for (std::uint32_t h : head_)
    for (std::uint32_t n = h; n != kNil; n = nodes_[n].next) all.push_back(nodes_[n].e);
  std::sort(all.begin(), all.end(), earlier);
  if (all.size() > n) all.resize(n);
  return all;
}

}  // namespace attnsim::engine
