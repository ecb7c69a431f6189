// Processes other than this one that run a sweep's points for it (the MPI worker ranks, see
// MpiSweepMaster): the sweep's main loop hands them point indices and takes back their records.
// Leaves out transport and the sweep itself; this process alone journals and writes the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/io/point_record.h"

namespace attnsim::app {

class RemotePointPool {
 public:
  // Up to `max` indices of points not yet handed out (empty: none left, or the sweep stops).
  using Take = std::function<std::vector<std::uint64_t>(std::size_t max)>;
  // A finished point came back.
  using Done = std::function<void(io::PointRecord&&)>;

  virtual ~RemotePointPool() = default;
  // Tells every worker whether the sweep starts (0) or not (the exit code they return).
  virtual void announce(int code) = 0;
  // Handles the messages waiting now without blocking; true if there were any.
  virtual bool serve(const Take& take, const Done& done) = 0;
  // No worker holds points it has not returned.
  virtual bool idle() const = 0;
  // How many processes ask for points (for batch sizing).
  virtual std::size_t workers() const = 0;
  // A worker's unexpected failure ("rank N: ..."); empty if none.
  virtual const std::string& failure() const = 0;
  // Stops every worker (each exits with `code`) after it returns the points it holds.
  virtual void stop(int code, const Done& done) = 0;
};

}  // namespace attnsim::app
