// Functional mode: executes a kernel's tile schedule (loop order, blocks, online-softmax
// rescaling, split-KV combine, FA-1 (Algorithm 4), FA-2 and FA-3 backward recomputation) on seeded
// random numbers in double and compares with plain attention (and its gradients). No timing,
// no memory model.
#pragma once

#include <functional>

#include "kernels/precision.h"
#include "sim/core/workload.h"

namespace attnsim::kernels {

// Max over the compared tensors (O; with pass fwdbwd also dQ, dK, dV) of
// max|schedule - reference| / max|reference|. `storage` = kFp64 runs everything in double
// (expected <= 1e-12); another precision rounds the inputs and what the kernel stores
// (S and P for standard, P blocks before P·V for the tiled kernels, O) to that format.
// At most ~5e7 multiply-adds of (batch, head) pairs are executed: heads beyond that are skipped.
// Throws core::ConfigError for kernels without a schedule (microbenchmarks).
double run_functional(const core::Workload& resolved, Precision storage = Precision::kFp64);
// The same, calling `poll` once per query row or row block of each pass (a stop request: an
// exception it throws ends the computation and propagates).
double run_functional(const core::Workload& resolved, Precision storage, const std::function<void()>& poll);

// Both errors of functional mode. `max_rel_error` is run_functional's: the schedule against plain
// attention on the same stored inputs. `rmse` is the root mean square over every element of O of
// (O of the schedule) - (O of plain attention in double on the inputs before they were
// quantized, stored or rotated): the end-to-end error of a low-precision kernel, as the
// FlashAttention-3 paper's numerical-error table reports it. Input distribution, FP8 scales and
// incoherent processing come from the workload (functional_inputs, fp8_scales,
// incoherent_processing).
struct FunctionalErrors {
  double max_rel_error = 0;
  double rmse = 0;
};
FunctionalErrors functional_errors(const core::Workload& resolved, Precision storage,
                                   const std::function<void()>& poll = {});

// The storage precision matching a workload dtype (fp32, fp16, bf16, fp8 e4m3).
Precision storage_precision(core::DType dtype);

}  // namespace attnsim::kernels
