// A warp group of a resident CTA: its own in-order op stream, program counter, current global
// load, async-copy groups (cp.async commit/wait) and async-MMA groups (wgmma commit/wait).
#pragma once

#include <algorithm>
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
  void clear() { head_ = count_ = 0; retired_ = 0; }
  bool full() const { return count_ == kMax; }
  std::uint32_t count() const { return count_; }
  // The number the next committed group gets (groups are numbered from 0 in commit order).
  std::uint64_t next() const { return retired_ + count_; }
  // The number of the oldest group that wait(pending) keeps (every older one is retired).
  std::uint64_t kept_after(std::uint64_t pending) const { return count_ > pending ? next() - pending : retired_; }
  void commit(double done) {  // precondition: !full()
    times_[(head_ + count_) % kMax] = done;
    ++count_;
  }
  // Committed group `group`, not yet retired, completes no earlier than `done`.
  void raise(std::uint64_t group, double done) {
    if (group < retired_ || group >= next()) return;
    double& t = times_[(head_ + (group - retired_)) % kMax];
    t = std::max(t, done);
  }
  // Retires groups until at most `pending` are left; returns the latest completion time retired
  // (or `now` when none).
  double wait(std::uint64_t pending, double now) {
    double done = now;
    while (count_ > pending) {
      done = std::max(done, times_[head_]);
      head_ = (head_ + 1) % kMax;
      --count_;
      ++retired_;
    }
    return done;
  }

 private:
  std::array<double, kMax> times_{};
  std::uint32_t head_ = 0, count_ = 0;
  std::uint64_t retired_ = 0;  // groups retired so far
};

// Where the issue of a tile load stands: the next row and byte offset, and the latest completion
// of the pieces issued so far.
struct LoadCursor {
  std::uint32_t row = 0;
  core::Bytes off = 0;
  double done = 0;
};

// An async copy (cp.async) queued in the SM's load/store path behind the warp group's earlier
// ones while the group goes on; `group`: the number of the commit group it belongs to.
struct QueuedCopy {
  core::TileOp op;
  std::uint64_t group = 0;
};

struct WarpGroup {
  std::vector<core::TileOp> ops;
  std::size_t pc = 0;
  std::uint64_t step = 0;
  std::uint32_t threads = 0;  // the group's threads (named barriers count threads)
  bool finished = false;
  bool load_in_progress = false;
  LoadCursor load;        // the blocking (or bulk) load being issued
  // Async copies waiting for load credits, oldest first from queued_head; `copy`: the issue of
  // the oldest. A cp.async instruction leaves the warp once the load/store path has taken it;
  // the path issues its lines as credits allow (docs/engine.md, "Async copies").
  std::vector<QueuedCopy> queued;
  std::size_t queued_head = 0;
  LoadCursor copy;
  bool copy_started = false;
  bool wait_copies = false;  // blocked until queued copies are issued (kWait, a blocking load, the end)
  double open_group = 0;  // latest completion of the async copies since the last commit
  AsyncGroups copies;     // cp.async groups
  double open_mma = 0;    // latest completion of the async MMAs since the last commit
  AsyncGroups mmas;       // wgmma groups
  double smem_ready = 0;  // latest completion of the async shared reads the next MMA consumes
  double op_start = -1;   // traced CTA: when the group reached ops[pc] (-1: not yet)

  bool copies_queued() const { return queued_head < queued.size(); }

  void reset() {
    ops.clear();
    pc = 0;
    step = 0;
    finished = false;
    load_in_progress = false;
    queued.clear();
    queued_head = 0;
    copy_started = false;
    wait_copies = false;
    open_group = 0;
    copies.clear();
    open_mma = 0;
    mmas.clear();
    smem_ready = 0;
    op_start = -1;
  }
};

}  // namespace attnsim::engine
