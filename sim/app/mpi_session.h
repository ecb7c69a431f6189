// This process's place in an MPI job: initialises MPI only when launched by mpirun/srun (so plain
// `attnsim` never touches MPI), and thin point-to-point/collective wrappers over MPI_COMM_WORLD.
// Leaves out everything but what sweeps need; without ATTNSIM_HAVE_MPI it is always rank 0 of 1.
#pragma once

#include <string>

namespace attnsim::app {

class MpiSession {
 public:
  // Calls MPI_Init_thread (MPI_THREAD_FUNNELED: only the thread that made the session calls MPI)
  // when the environment says a launcher started this process with more than one rank.
  // Throws core::ConfigError when launched with several ranks by a build without MPI.
  MpiSession();
  ~MpiSession();  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // The world size a launcher announced (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE); 1 if none.
  static int launcher_size();
  static bool built_with_mpi();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool distributed() const { return size_ > 1; }

  // Collectives over every rank.
  int all_max(int value) const;
  int broadcast(int value, int root) const;
  // Waits until every rank reaches it.
  void barrier() const;

  // Point-to-point text messages.
  void send(int dest, int tag, const std::string& payload) const;
  // True and fills source/tag when a message is waiting (non-blocking).
  bool probe(int& source, int& tag) const;
  // Receives one message from `source` (any tag when tag < 0); blocks.
  std::string receive(int source, int& tag) const;

  // Last resort when ranks can no longer agree: kills the whole job.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialised_ = false;
};

}  // namespace attnsim::app
