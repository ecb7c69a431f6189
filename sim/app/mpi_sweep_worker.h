// A worker rank (rank > 0) of an MPI sweep: asks rank 0 for point indices, runs them, sends back
// their exact records with the next request. Leaves out journaling and writing (rank 0 only).
#pragma once

#include "sim/app/mpi_session.h"
#include "sim/app/sweep_runner.h"
#include "sim/config/sweep_expander.h"

namespace attnsim::app {

class MpiSweepWorker {
 public:
  MpiSweepWorker(const MpiSession& mpi, const config::SweepExpander& expander, PointRunner run_point);

  // Runs until rank 0 says stop; returns the exit code rank 0 chose (0 ok, 2 refused, 130
  // interrupted, 3 failure). A point failing with an unexpected exception is reported to rank 0
  // and ends this worker with 3.
  int run();

 private:
  const MpiSession& mpi_;
  const config::SweepExpander& expander_;
  PointRunner run_point_;
};

}  // namespace attnsim::app
