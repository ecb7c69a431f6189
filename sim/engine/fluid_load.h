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
      : capacity_(bytes_per_cycle), buckets_(kBuckets), blocks_(kBlocks) {}
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
        t0, t0 + duration, [&](std::int64_t b, double share) { put(b, rate * share * kWidth); },
        [&](std::int64_t b) { put(b, whole); }, [&](std::int64_t k) { block(k).all += whole; });
    double before = 0;  // bytes inside the span before (uniform within a bucket)
    for_each(
        t0 - duration, t0, [&](std::int64_t b, double share) { before += value(b) * share; },
        [&](std::int64_t b) { before += value(b); },
        [&](std::int64_t k) {
          const Block& x = block(k);
          before += x.sum + x.all * static_cast<double>(kPerBlock);
        });
    return t0 + before / capacity_;
  }
  // How much longer a timed access at `t` takes: 1 / (1 - u), u the fluid's share of the
  // capacity at t (at most kMaxShare).
  double factor(double t) const {
    if (!enabled() || t < 0) return 1.0;
    const double u = std::min(kMaxShare, value(static_cast<std::int64_t>(t / kWidth)) / (capacity_ * kWidth));
    return 1.0 / (1.0 - u);
  }

 private:
  static constexpr std::size_t kBuckets = std::size_t{1} << 15;
  static constexpr double kWidth = 256;        // cycles per bucket
  static constexpr double kMaxShare = 0.9;     // timed accesses keep a tenth of an oversubscribed level
  // Buckets come in blocks of kPerBlock: a span that covers a whole block adds to (and sums) the
  // block once instead of each of its buckets (a CTA skipped whole covers thousands of buckets).
  static constexpr std::int64_t kPerBlock = 64;
  static constexpr std::size_t kBlocks = kBuckets / kPerBlock;
  struct Bucket {
    std::int64_t index = -1;  // the absolute bucket held (-1: none)
    double fluid = 0;         // bytes in it, beside its block's `all`
  };
  struct Block {
    std::int64_t index = -1;  // the absolute block held (-1: none)
    double all = 0;           // bytes in each of its buckets, added block-wise
    double sum = 0;           // its buckets' own `fluid`, summed
  };
  // Bucket b and block k (= b / kPerBlock) of the current horizon; one of an earlier horizon is
  // empty now (a block emptied leaves its buckets' indices stale, so they read as empty too).
  Block& block(std::int64_t k) {
    Block& x = blocks_[static_cast<std::size_t>(k) % kBlocks];
    if (x.index != k) x = {k, 0, 0};
    return x;
  }
  void put(std::int64_t b, double bytes) {
    Block& x = block(b / kPerBlock);
    Bucket& u = buckets_[static_cast<std::size_t>(b) % kBuckets];
    if (u.index != b) u = {b, 0};
    u.fluid += bytes;
    x.sum += bytes;
  }
  double value(std::int64_t b) const {
    const Block& x = blocks_[static_cast<std::size_t>(b / kPerBlock) % kBlocks];
    if (x.index != b / kPerBlock) return 0;
    const Bucket& u = buckets_[static_cast<std::size_t>(b) % kBuckets];
    return x.all + (u.index == b ? u.fluid : 0);
  }
  // part(b, share of bucket b inside [t0, t1)) for the partly covered buckets at the two ends,
  // whole(b) for each whole bucket, and whole_block(k) for each whole block among them (its
  // buckets not passed to whole), for [t0, t1) (its t0 >= 0 part).
  template <class F, class W, class K>
  void for_each(double t0, double t1, F&& part, W&& whole, K&& whole_block) {
    t0 = std::max(t0, 0.0);
    if (t1 <= t0) return;
    const auto b0 = static_cast<std::int64_t>(t0 / kWidth), b1 = static_cast<std::int64_t>(t1 / kWidth);
    auto ends = [&](std::int64_t b) {
      const double lo = std::max(t0, static_cast<double>(b) * kWidth);
      const double hi = std::min(t1, static_cast<double>(b + 1) * kWidth);
      if (hi > lo) part(b, (hi - lo) / kWidth);
    };
    ends(b0);
    std::int64_t b = b0 + 1;
    for (; b < b1 && b % kPerBlock != 0; ++b) whole(b);
    for (; b + kPerBlock <= b1; b += kPerBlock) whole_block(b / kPerBlock);
    for (; b < b1; ++b) whole(b);
    if (b1 > b0) ends(b1);
  }
  double capacity_ = 0;
  std::vector<Bucket> buckets_;
  std::vector<Block> blocks_;
};

}  // namespace attnsim::engine
