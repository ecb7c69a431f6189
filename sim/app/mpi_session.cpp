#include "sim/app/mpi_session.h"

#include <cstdlib>
#include <string>

#include "sim/core/errors.h"

#ifdef ATTNSIM_HAVE_MPI
// Only MPI's C API is used; skip the deprecated C++ bindings (and their warnings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace attnsim::app {

int MpiSession::launcher_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(var)) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return 1;
}

bool MpiSession::built_with_mpi() {
#ifdef ATTNSIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

#ifdef ATTNSIM_HAVE_MPI

MpiSession::MpiSession() {
  // A single rank (or no launcher at all) behaves exactly like a plain run: MPI is never
  // initialised, so `attnsim sweep` outside mpirun cannot block on a missing launcher.
  if (launcher_size() <= 1) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (initialised_) MPI_Finalize();
}

int MpiSession::all_max(int value) const {
  if (!initialised_) return value;
  int out = value;
  MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

int MpiSession::broadcast(int value, int root) const {
  if (!initialised_) return value;
  MPI_Bcast(&value, 1, MPI_INT, root, MPI_COMM_WORLD);
  return value;
}

void MpiSession::barrier() const {
  if (initialised_) MPI_Barrier(MPI_COMM_WORLD);
}

void MpiSession::send(int dest, int tag, const std::string& payload) const {
  MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

bool MpiSession::probe(int& source, int& tag) const {
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
  if (!flag) return false;
  source = st.MPI_SOURCE;
  tag = st.MPI_TAG;
  return true;
}

std::string MpiSession::receive(int source, int& tag) const {
  MPI_Status st;
  MPI_Probe(source, tag < 0 ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &st);
  int count = 0;
  MPI_Get_count(&st, MPI_CHAR, &count);
  std::string payload(static_cast<std::size_t>(count), '\0');
  MPI_Recv(payload.data(), count, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  tag = st.MPI_TAG;
  return payload;
}

void MpiSession::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

#else

MpiSession::MpiSession() {
  if (launcher_size() > 1)
    throw core::ConfigError(core::ConfigProblem{
        "", 0, "mpirun", "this attnsim was built without MPI (ATTNSIM_MPI=OFF): run one process, or split the "
                         "sweep with --shard I/N and attnsim merge"});
}

MpiSession::~MpiSession() = default;
int MpiSession::all_max(int value) const { return value; }
int MpiSession::broadcast(int value, int) const { return value; }
void MpiSession::barrier() const {}
void MpiSession::send(int, int, const std::string&) const { throw core::SimError("MPI is not available"); }
bool MpiSession::probe(int&, int&) const { return false; }
std::string MpiSession::receive(int, int&) const { throw core::SimError("MPI is not available"); }
void MpiSession::abort(int) const { std::abort(); }

#endif

}  // namespace attnsim::app
