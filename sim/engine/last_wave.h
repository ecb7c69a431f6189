// The retire times of a launch's last wave (its last `size` CTAs to end, `size` = the CTAs the
// device holds at once) and the launch's tail: how far its last CTA ends after that wave's median.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace attnsim::engine {

class LastWave {
 public:
  explicit LastWave(std::size_t size = 1) : ends_(std::max<std::size_t>(1, size)) {}
  void retire(double t) {
    ends_[next_] = t;
    next_ = next_ + 1 == ends_.size() ? 0 : next_ + 1;
    if (count_ < ends_.size()) ++count_;
  }
  // (end - the median retire time of the last wave) / end: the share of the launch's time that
  // rests on its slowest CTAs rather than on the wave's typical one; 0 before any CTA retired.
  double tail(double end) const {
    if (count_ == 0 || end <= 0) return 0;
    std::vector<double> last(ends_.begin(), ends_.begin() + static_cast<std::ptrdiff_t>(count_));
    auto mid = last.begin() + static_cast<std::ptrdiff_t>(count_ / 2);
    std::nth_element(last.begin(), mid, last.end());
    return std::max(0.0, end - *mid) / end;
  }

 private:
  std::vector<double> ends_;
  std::size_t next_ = 0, count_ = 0;
};

}  // namespace attnsim::engine
