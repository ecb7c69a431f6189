// A warp group of a resident CTA: its own in-order op stream, program counter, current global
// load, async-copy groups (cp.async commit/wait) and async-MMA groups (wgmma commit/wait).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/tile_op.h"
#include "sim/core/types.h"

namespace attnsim::engine {

// Committed, not yet waited-for groups of async work, as completion times, oldest first.
class AsyncGroups {
 public:
  static constexpr std::uint32_t kMax = 64;
  void clear() { head_ = count_ = 0; }
  bool full() const { return count_ == kMax; }
  std::uint32_t count() const { return count_; }
  void commit(double done) {  // precondition: !full()
    times_[(head_ + count_) % kMax] = done;
    ++count_;
  }
  // Retires groups until at most `pending` are left; returns the latest completion time retired
  // (or `now` when none).
  double wait(std::uint64_t pending, double now) {
    double done = now;
    while (count_ > pending) {
      done = std::max(done, times_[head_]);
      head_ = (head_ + 1) % kMax;
      --count_;
    }
    return done;
  }

 private:
  std::array<double, kMax> times_{};
  std::uint32_t head_ = 0, count_ = 0;
};

struct WarpGroup {
  std::vector<core::TileOp> ops;
  std::size_t pc = 0;
  std::uint64_t step = 0;
  std::uint32_t threads = 0;  // the group's threads (named barriers count threads)
  bool finished = false;
  bool load_in_progress = false;
  std::uint32_t load_row = 0;
  core::Bytes load_off = 0;
  double load_done = 0;
  double open_group = 0;  // latest completion of the async copies since the last commit
  AsyncGroups copies;     // cp.async groups
  double open_mma = 0;    // latest completion of the async MMAs since the last commit
  AsyncGroups mmas;       // wgmma groups
  double smem_ready = 0;  // latest completion of the async shared reads the next MMA consumes

  void reset() {
    ops.clear();
    pc = 0;
    step = 0;
    finished = false;
    load_in_progress = false;
    open_group = 0;
    copies.clear();
    open_mma = 0;
    mmas.clear();
    smem_ready = 0;
  }
};

}  // namespace attnsim::engine
