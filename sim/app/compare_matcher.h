// Pairs measured kernels with simulated ones: the workload's parameters pick the simulated point,
// the kernel's launch order picks the kernel within it. No fuzzy matching on kernel names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/app/compare_simulated_reader.h"
#include "sim/io/ncu_csv_reader.h"

namespace attnsim::app {

struct KernelMatch {
  std::size_t measured = 0;   // index into MeasuredTable::kernels
  std::size_t point = 0;      // index into the simulated points vector
  std::size_t kernel = 0;     // index into SimulatedPoint::kernels
};

struct UnmatchedKernel {
  std::size_t measured = 0;
  std::string reason;
};

struct MatchResult {
  std::vector<KernelMatch> matches;        // in measured file order
  std::vector<UnmatchedKernel> unmatched;  // in measured file order
};

class CompareMatcher {
 public:
  // `device`, when not empty, keeps only simulated points whose config names that device.
  static MatchResult match(const io::MeasuredTable& measured, const std::vector<SimulatedPoint>& simulated,
                           const std::string& device = "");

  // The attnsim kernels a measured workload may correspond to, in order of preference:
  // the `kernel` column when given; else by variant: std/standard -> standard,
  // sdpa_flash/flash2 -> flash2 (then flash_decode when seq_q = 1), flash1, flash_decode.
  // Empty for an unknown variant.
  static std::vector<std::string> candidate_kernels(const io::MeasuredWorkload& w);

  // Whether the simulated point has the measured workload's shape (batch, heads, kv_heads, seq_q,
  // seq_kv, head_dim, causal, pass) and, where the measurement names them and the point resolved
  // them (non-zero), the same block_m, block_n, warps, stages and cta_order.
  static bool same_workload(const io::MeasuredWorkload& w, const SimulatedPoint& p);
};

}  // namespace attnsim::app
