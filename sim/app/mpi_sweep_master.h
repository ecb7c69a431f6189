// Rank 0 of an MPI sweep: hands point indices to worker ranks as they ask (dynamic load balancing,
// adaptive batches for cheap points) and collects their records. Leaves out journaling and HDF5
// writing, which SweepRunner does on rank 0 alone.
#pragma once

#include <vector>

#include "sim/app/mpi_session.h"
#include "sim/app/remote_point_pool.h"

namespace attnsim::app {

// Why gather to one writer instead of parallel HDF5: Debian's MPI builds of HDF5 support only the
// C API, and attnsim writes with the C++ API; a row is a few KiB, so shipping records to rank 0 is
// cheap next to simulating them; one writer keeps the journal (one file per point, fsync'ed) and
// the temp-and-rename file protocol exactly as in one process, so the file is byte-for-byte the
// same table whatever the rank count, and a killed rank can never leave a half-written file.
class MpiSweepMaster : public RemotePointPool {
 public:
  explicit MpiSweepMaster(const MpiSession& mpi);
  // Aborts the MPI job if workers were never stopped (an exception unwound the sweep), since they
  // would otherwise wait for rank 0 forever.
  ~MpiSweepMaster() override;

  void announce(int code) override;
  bool serve(const Take& take, const Done& done) override;
  bool idle() const override;
  std::size_t workers() const override { return workers_.size() - 1; }
  const std::string& failure() const override { return failure_; }
  void stop(int code, const Done& done) override;

  static constexpr std::size_t kMaxBatch = 64;
  static constexpr double kCheapBatchSeconds = 0.05;   // below: double the worker's batch
  static constexpr double kCostlyBatchSeconds = 0.5;   // above: halve it

 private:
  struct Worker {
    std::size_t batch = 1;    // indices handed out per request
    std::size_t holding = 0;  // handed out, not yet returned
    bool waiting = false;     // asked for work, not answered
    bool stopped = false;
  };
  void handle(int source, int tag, const Take& take, const Done& done);
  void send_stop(int rank);

  const MpiSession& mpi_;
  std::vector<Worker> workers_;  // indexed by rank; rank 0 is this process
  std::string failure_;
  int stop_code_ = -1;  // >= 0 once stop() began
};

}  // namespace attnsim::app
