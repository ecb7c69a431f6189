// Closed-form HBM traffic per tensor and per launch: the oracle that CI trusts.
// Pure arithmetic on a resolved Workload (FlashAttention Theorem 2 / Appendix C accounting).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "sim/core/tile_op.h"
#include "sim/core/workload.h"

namespace attnsim::core {

struct TensorBytes {
  Bytes read = 0;
  Bytes write = 0;
  TensorBytes& operator+=(const TensorBytes& o) {
    read += o.read;
    write += o.write;
    return *this;
  }
  bool operator==(const TensorBytes&) const = default;
};

// Bytes per tensor, indexed by Tensor.
struct TensorTraffic {
  std::array<TensorBytes, kNumTensors> by_tensor{};
  TensorBytes& operator[](Tensor t) { return by_tensor[static_cast<std::size_t>(t)]; }
  const TensorBytes& operator[](Tensor t) const { return by_tensor[static_cast<std::size_t>(t)]; }
  TensorTraffic& operator+=(const TensorTraffic& o) {
    for (std::size_t i = 0; i < kNumTensors; ++i) by_tensor[i] += o.by_tensor[i];
    return *this;
  }
  Bytes total_read() const;
  Bytes total_write() const;
  bool operator==(const TensorTraffic&) const = default;
};

struct LaunchTraffic {
  std::string kernel_name;  // same names the KernelLaunch objects report
  TensorTraffic traffic;
};

// The closed forms of the attention kernels, one per kernel (kernels/registry.cpp lists which
// is whose; kernels::closed_form_traffic picks the workload's). compulsory = false: every global
// load/store reaches HBM (L2 off): bytes per tensor per launch, exactly. compulsory = true:
// unbounded L2, flushed (written back) at the end of each launch: each distinct byte a launch
// reads comes from HBM once and each distinct byte it writes goes to HBM once. Local memory
// (stack_frame_bytes) counts one CTA's frames, the distinct bytes of the op stream; the engine
// writes one copy per resident CTA slot it used.
std::vector<LaunchTraffic> standard_traffic(const Workload& resolved, bool compulsory);
std::vector<LaunchTraffic> flash1_traffic(const Workload& resolved, bool compulsory);
std::vector<LaunchTraffic> flash2_traffic(const Workload& resolved, bool compulsory);
std::vector<LaunchTraffic> flash_decode_traffic(const Workload& resolved, bool compulsory);
// FlashAttention-3's forward: Q and O once, K and V once per query block (causal: up to the
// diagonal block), LSE always; FP8 writes O in bf16.
std::vector<LaunchTraffic> flash3_traffic(const Workload& resolved, bool compulsory);

}  // namespace attnsim::core
