// The bandwidth that skipped steps of sampled simulation take from a memory level, as a fluid:
// each skipped step's bytes spread evenly over its expected duration, in time buckets; timed
// accesses see the level's rate lowered by the fluid's share instead of queueing behind it, and
// a skipped step lasts at least as long as the level needed to move the fluid it carried over
// the span before it (the caller adds the timed work still queued).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace attnsim::engine {

class FluidLoad {
 public:
  FluidLoad() = default;
  // `bytes_per_cycle`: the level's capacity (all its channels or ports together).
  explicit FluidLoad(double bytes_per_cycle)
      : capacity_(bytes_per_cycle), buckets_(kBuckets) {}
  bool enabled() const { return capacity_ > 0; }

  // `bytes` moved evenly over [t0, t0 + duration). Returns t0 plus the time the level needed for
  // the fluid it carried over [t0 - duration, t0) (complete: every skipped step that overlaps
  // that span started before t0): before t0 + duration unless skipped work oversubscribed it,
  // in which case a step at this rate takes longer.
  double add(double t0, double duration, double bytes) {
    if (bytes <= 0 || !enabled()) return t0;
    // At the rate of the whole span; a span beyond the horizon loses its tail, not its rate.
    duration = std::max(duration, kWidth);
    const double rate = bytes / duration;
    duration = std::min(duration, kWidth * (kBuckets / 4));
    const double whole = rate * kWidth;  // a whole bucket's bytes (rate * 1.0 * kWidth, bit for bit)
    for_each(
        t0, t0 + duration, [&](Bucket& b, double share) { b.fluid += rate * share * kWidth; },
        [&](Bucket& b) { b.fluid += whole; });
    double before = 0;  // bytes inside the span before (uniform within a bucket)
    for_each(
        t0 - duration, t0, [&](Bucket& b, double share) { before += b.fluid * share; },
        [&](Bucket& b) { before += b.fluid; });
    return t0 + before / capacity_;
  }
  // How much longer a timed access at `t` takes: 1 / (1 - u), u the fluid's share of the
  // capacity at t (at most kMaxShare).
  double factor(double t) const {
    if (!enabled() || t < 0) return 1.0;
    const auto b = static_cast<std::int64_t>(t / kWidth);
    const Bucket& k = buckets_[static_cast<std::size_t>(b) % kBuckets];
    if (k.index != b) return 1.0;
    const double u = std::min(kMaxShare, k.fluid / (capacity_ * kWidth));
    return 1.0 / (1.0 - u);
  }

 private:
  static constexpr std::size_t kBuckets = std::size_t{1} << 15;
  static constexpr double kWidth = 256;        // cycles per bucket
  static constexpr double kMaxShare = 0.9;     // timed accesses keep a tenth of an oversubscribed level
  struct Bucket {
    std::int64_t index = -1;  // the absolute bucket held (-1: none)
    double fluid = 0;         // bytes in it
  };
  Bucket& slot(std::int64_t b) {
    Bucket& k = buckets_[static_cast<std::size_t>(b) % kBuckets];
    if (k.index != b) k = {b, 0};  // a bucket of an earlier horizon: empty now
    return k;
  }
  // f(bucket, share of it inside [t0, t1)) for every bucket [t0, t1) touches (t0 >= 0 part);
  // whole(bucket) for the buckets inside it, whose share is exactly 1 (long spans: a CTA skipped
  // whole covers thousands), in the same order.
  template <class F, class W>
  void for_each(double t0, double t1, F&& f, W&& whole) {
    t0 = std::max(t0, 0.0);
    if (t1 <= t0) return;
    const auto b0 = static_cast<std::int64_t>(t0 / kWidth), b1 = static_cast<std::int64_t>(t1 / kWidth);
    auto part = [&](std::int64_t b) {
      const double lo = std::max(t0, static_cast<double>(b) * kWidth);
      const double hi = std::min(t1, static_cast<double>(b + 1) * kWidth);
      if (hi > lo) f(slot(b), (hi - lo) / kWidth);
    };
    part(b0);
    for (std::int64_t b = b0 + 1; b < b1; ++b) whole(slot(b));
    if (b1 > b0) part(b1);
  }
  double capacity_ = 0;
  std::vector<Bucket> buckets_;
};

}  // namespace attnsim::engine
