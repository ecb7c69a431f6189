// Tile MMA timing by instruction flavour (see mma_timing.h).
#include "sim/engine/mma_timing.h"

#include <algorithm>

namespace attnsim::engine {

const core::MmaFlavourSpec* mma_flavour_spec(const core::SmSpec& spec, core::MmaFlavour flavour) {
  const core::MmaFlavourSpec* f = nullptr;
  switch (flavour) {
    case core::MmaFlavour::kDefault: return nullptr;
    case core::MmaFlavour::kMmaSync: f = &spec.mma.mma_sync; break;
    case core::MmaFlavour::kWgmma: f = &spec.mma.wgmma; break;
    case core::MmaFlavour::kTcgen05: f = &spec.mma.tcgen05; break;
  }
  return f && f->present ? f : nullptr;
}

double time_mma(Sm& sm, const core::SmSpec& spec, const core::TileOp& op, core::DType dtype, double now) {
  const double flops = 2.0 * op.m * op.n * op.k;
  const core::MmaFlavourSpec* f = mma_flavour_spec(spec, op.flavour);
  if (!f) return sm.tensor.serve(now, flops);
  double scale = 1.0;  // this dtype's rate / the fp16 rate
  if (dtype == core::DType::kFp8 && f->fp8_scale > 0) scale = f->fp8_scale;
  if (dtype == core::DType::kFp32 && f->tf32_scale > 0) scale = f->tf32_scale;
  const double rate = f->flops_per_cycle * scale;
  // The pipe serves at the dense fp16 rate (Sm::from_spec); at `rate` the op holds it
  // tensor_flops_per_cycle / rate times as long as its flops alone would.
  const double tensor_done = sm.tensor.serve(now, spec.tensor_flops_per_cycle > 0 ? flops * spec.tensor_flops_per_cycle / rate : 0.0);
  // An fp8 instruction covers twice the k of an fp16 one ([ptx] m16n8k32, m64nNk32).
  const double per_instruction = 2.0 * f->m * f->n * f->k * (dtype == core::DType::kFp8 ? 2.0 : 1.0);
  const double threads = static_cast<double>(f->issue_warps) * std::max(1u, spec.warp_size);
  const double issue_done = per_instruction > 0 ? sm.issue.serve(now, flops / per_instruction * threads) : now;
  return std::max(tensor_done, issue_done) + f->latency_cycles;
}

}  // namespace attnsim::engine
