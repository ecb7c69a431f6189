#include "sim/app/mpi_sweep_worker.h"

#include <chrono>
#include <exception>
#include <string>

#include "sim/app/mpi_sweep_protocol.h"

namespace attnsim::app {

MpiSweepWorker::MpiSweepWorker(const MpiSession& mpi, const config::SweepExpander& expander, PointRunner run_point)
    : mpi_(mpi), expander_(expander), run_point_(std::move(run_point)) {}

int MpiSweepWorker::run() {
  const int start = mpi_.broadcast(0, 0);  // MpiSweepMaster::announce
  if (start != 0) return start;
  ReadyMessage ready;
  for (;;) {
    mpi_.send(0, kTagReady, encode_ready(ready));
    int tag = -1;
    const std::string payload = mpi_.receive(0, tag);
    if (tag == kTagStop) return std::stoi(payload);
    ready = ReadyMessage{};
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::uint64_t index : decode_indices(payload)) {
      try {
        ready.records.push_back(run_sweep_point(expander_.point(index), run_point_));
      } catch (const std::exception& e) {
        mpi_.send(0, kTagFailure, "rank " + std::to_string(mpi_.rank()) + ": point " + std::to_string(index) +
                                      ": " + e.what());
        return 3;
      }
    }
    ready.compute_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

}  // namespace attnsim::app
