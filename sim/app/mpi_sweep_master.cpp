#include "sim/app/mpi_sweep_master.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "sim/app/mpi_sweep_protocol.h"

namespace attnsim::app {

MpiSweepMaster::MpiSweepMaster(const MpiSession& mpi)
    : mpi_(mpi), workers_(static_cast<std::size_t>(mpi.size())) {
  workers_[0].stopped = true;
}

MpiSweepMaster::~MpiSweepMaster() {
  for (const auto& w : workers_) {
    if (!w.stopped) {
      std::cerr << "attnsim sweep: rank 0 failed while workers were running; aborting the MPI job\n" << std::flush;
      mpi_.abort(3);
    }
  }
}

void MpiSweepMaster::announce(int code) {
  mpi_.broadcast(code, 0);
  if (code != 0)
    for (auto& w : workers_) w.stopped = true;
}

void MpiSweepMaster::send_stop(int rank) {
  Worker& w = workers_[static_cast<std::size_t>(rank)];
  mpi_.send(rank, kTagStop, std::to_string(stop_code_));
  w.waiting = false;
  w.stopped = true;
}

void MpiSweepMaster::handle(int source, int tag, const Take& take, const Done& done) {
  const std::string payload = mpi_.receive(source, tag);
  Worker& w = workers_[static_cast<std::size_t>(source)];
  if (tag == kTagFailure) {
    if (failure_.empty()) failure_ = payload;
    w.holding = 0;
    w.waiting = false;
    w.stopped = true;  // a failed worker exits on its own
    return;
  }
  ReadyMessage m = decode_ready(payload);
  w.holding = 0;
  w.waiting = true;
  if (!m.records.empty()) {
    if (m.compute_seconds < kCheapBatchSeconds) w.batch = std::min(kMaxBatch, w.batch * 2);
    else if (m.compute_seconds > kCostlyBatchSeconds) w.batch = std::max<std::size_t>(1, w.batch / 2);
  }
  // Answer first, journal after: the worker computes while rank 0 makes its records durable.
  if (stop_code_ >= 0) {
    send_stop(source);
  } else if (failure_.empty()) {
    const std::vector<std::uint64_t> work = take(w.batch);
    if (!work.empty()) {
      mpi_.send(source, kTagWork, encode_indices(work));
      w.holding = work.size();
      w.waiting = false;
    }
    // Nothing left: the request stays unanswered until stop() gives the exit code.
  }
  for (auto& r : m.records) done(std::move(r));
}

bool MpiSweepMaster::serve(const Take& take, const Done& done) {
  bool any = false;
  int source = 0, tag = 0;
  for (int n = 0; n < 256 && mpi_.probe(source, tag); ++n) {
    handle(source, tag, take, done);
    any = true;
  }
  return any;
}

bool MpiSweepMaster::idle() const {
  return std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.holding == 0; });
}

void MpiSweepMaster::stop(int code, const Done& done) {
  stop_code_ = code;
  const Take none = [](std::size_t) { return std::vector<std::uint64_t>{}; };
  for (;;) {
    for (std::size_t rank = 1; rank < workers_.size(); ++rank)
      if (workers_[rank].waiting && !workers_[rank].stopped) send_stop(static_cast<int>(rank));
    if (std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.stopped; })) return;
    if (!serve(none, done)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace attnsim::app
