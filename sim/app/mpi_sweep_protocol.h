// The messages of an MPI sweep between rank 0 (master) and the worker ranks: tags and the exact
// text encodings of a work batch, a stop order and a batch of finished point records.
// Leaves out transport (MpiSession) and scheduling (MpiSweepMaster).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/io/point_record.h"

namespace attnsim::app {

// worker -> master: finished records of the last batch (none at first) and a request for more.
inline constexpr int kTagReady = 1;
// worker -> master: a point failed with an unexpected exception; the worker then exits 3.
inline constexpr int kTagFailure = 2;
// master -> worker: point indices to run.
inline constexpr int kTagWork = 3;
// master -> worker: no more work; the payload is the exit code for the worker.
inline constexpr int kTagStop = 4;

struct ReadyMessage {
  double compute_seconds = 0;  // time the worker spent on the batch it returns
  std::vector<io::PointRecord> records;
};

// Length-prefixed io::serialize_point texts; decode throws std::runtime_error if malformed.
std::string encode_ready(const ReadyMessage& m);
ReadyMessage decode_ready(const std::string& text);

std::string encode_indices(const std::vector<std::uint64_t>& indices);
std::vector<std::uint64_t> decode_indices(const std::string& text);

}  // namespace attnsim::app
