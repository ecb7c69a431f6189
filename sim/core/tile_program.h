// The interface between kernels and the engine: a launched kernel as a grid of CTAs, each a
// lazily generated sequence of tile operations. Lives in core so the engine never sees kernels/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/core/tile_op.h"
#include "sim/core/workload.h"

namespace attnsim::core {

struct LaunchShape {
  std::uint64_t grid_x = 1, grid_y = 1, grid_z = 1;
  std::uint32_t threads_per_cta = 128;
  std::uint32_t regs_per_thread = 32;
  Bytes smem_static_bytes = 0;
  Bytes smem_dynamic_bytes = 0;
  // Local memory per thread (ptxas's "bytes stack frame": register spills). The launch's ops on
  // Tensor::kLocal address one CTA's frames from tensor_base(kLocal); the engine moves them to the
  // copy of the resident CTA slot running it, as the hardware maps local memory per thread slot.
  std::uint32_t stack_frame_bytes = 0;
  // Blocking loads timed by the engine (attnsim__cycles_per_load over the last timed_loads of
  // them, e.g. pointer_chase after its warm traversal); 0: none timed.
  std::uint64_t timed_loads = 0;
  // CTAs per thread-block cluster (sm_90 __cluster_dims__): CTAs cluster_size·c ... cluster_size·c +
  // cluster_size - 1 form cluster c (rank = CTA mod cluster_size), are placed on the device at the
  // same time, all or none, and may multicast TMA loads to each other (TileOp::multicast).
  std::uint32_t cluster_size = 1;
  // The most global-load bytes one warp of this kernel keeps in flight where its code holds that
  // below the device's sm.max_inflight_bytes_per_warp (PyTorch's non-contiguous elementwise loop
  // loads one value per thread and waits for it before the next); 0: the device's allowance.
  Bytes inflight_bytes_per_warp = 0;
  // Operand type of the launch's MMAs: a flavoured MMA's rate scales with it (sm.mma.<flavour>
  // fp8_scale, tf32_scale; sim/engine/mma_timing.*).
  DType mma_dtype = DType::kFp16;

  std::uint64_t num_ctas() const { return grid_x * grid_y * grid_z; }
  Bytes smem_per_cta() const { return smem_static_bytes + smem_dynamic_bytes; }
  std::uint32_t warps_per_cta(std::uint32_t warp_size = 32) const {
    return (threads_per_cta + warp_size - 1) / warp_size;
  }
};

// A warp group of a warp-specialized CTA: its role, its warps and its registers per thread after
// setmaxnreg. The groups' warps add up to the CTA's; occupancy is that of the launch shape (setmaxnreg
// only moves registers within the CTA's launch allocation, so the groups' warps x 32 x registers
// may not exceed threads_per_cta x regs_per_thread).
enum class WarpRole : std::uint8_t { kAll, kProducer, kConsumer };
struct WarpGroupSpec {
  WarpRole role = WarpRole::kAll;
  std::uint32_t warps = 0;            // warps of this group
  std::uint32_t regs_per_thread = 0;  // after setmaxnreg; 0: the launch's regs_per_thread
};

// One kernel launch. CTAs are numbered 0..num_ctas()-1 in the order the hardware
// dispatches them (the rasterization order is the kernel's business).
class KernelLaunch {
 public:
  virtual ~KernelLaunch() = default;
  virtual std::string name() const = 0;
  virtual LaunchShape shape() const = 0;
  // Appends the ops of loop step `step` (0, 1, 2, ...) of CTA `cta` to `out` and returns true;
  // returns false (appending nothing) once the CTA has no step `step`. Steps keep memory
  // bounded: the engine asks for the next step only when it has run out of ops.
  virtual bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<TileOp>& out) const = 0;

  // Warp specialization. A CTA is one or more warp groups, each its own in-order op stream; the
  // default is one group of all the CTA's warps, whose ops are emit_step's.
  virtual std::vector<WarpGroupSpec> warp_groups() const {
    return {WarpGroupSpec{WarpRole::kAll, shape().warps_per_cta(), 0}};
  }
  // As emit_step, for warp group `group` (0 .. warp_groups().size() - 1) of CTA `cta`.
  virtual bool emit_group_step(std::uint64_t cta, std::uint32_t group, std::uint64_t step,
                               std::vector<TileOp>& out) const {
    return group == 0 && emit_step(cta, step, out);
  }
  // The CTA's mbarriers (ids 0 .. size - 1), each with its expected arrivals per phase, as
  // mbarrier.init sets them before the warp groups start.
  virtual std::vector<std::uint32_t> mbarriers() const { return {}; }

  // A key of the shape of step `step`'s ops for warp group `group` of CTA `cta`: two steps of one
  // CTA's group with the same key other than kUnknownStepShape emit the same number of ops, equal
  // in every TileOp field but `addr`, and the key is kUnknownStepShape where the CTA has no such
  // step. Sampled mode skips steps it counts only by shape without emitting them where the key
  // says the shape is the previous step's. Default: unknown for every step (always emitted).
  static constexpr std::uint64_t kUnknownStepShape = ~std::uint64_t{0};
  virtual std::uint64_t step_shape(std::uint64_t cta, std::uint32_t group, std::uint64_t step) const {
    (void)cta, (void)group, (void)step;
    return kUnknownStepShape;
  }
};

// Every op of every warp group of CTA `cta`, in group then step order (bytes, estimates).
template <typename Visit>
void for_each_cta_op(const KernelLaunch& launch, std::size_t groups, std::uint64_t cta, std::vector<TileOp>& buf,
                     Visit&& visit) {
  for (std::uint32_t g = 0; g < groups; ++g)
    for (std::uint64_t step = 0;; ++step) {
      buf.clear();
      if (!launch.emit_group_step(cta, g, step, buf)) break;
      for (const TileOp& op : buf) visit(op);
    }
}

// A workload resolved for a device: the launches in order, plus what they were built from.
struct TileProgram {
  Workload workload;                                   // resolved (defaults filled in)
  std::vector<std::unique_ptr<KernelLaunch>> launches;
};

}  // namespace attnsim::core
