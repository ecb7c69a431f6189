// FlashAttention-3's Hopper backward (hopper/flash_bwd_*_sm90): tile choices, resolution of the
// backward's tile on a flash3 workload, its launches and their closed-form HBM traffic.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/io_counts.h"
#include "sim/core/tile_program.h"
#include "sim/core/workload.h"

namespace attnsim::kernels {

// flash_bwd_launch_template.h, run_mha_bwd_hdim* for Arch >= 90 (no softcap): the template
// arguments of run_mha_bwd_dispatch.
struct Flash3BwdTile {
  std::uint64_t block_m = 64, block_n = 128;
  std::uint32_t stages_do = 2, stages_ds = 2;
  bool sdp_swapab = true, dkv_swapab = false, dq_swapab = false;
  std::uint32_t warpgroups = 2, atom_sdp = 1, atom_dkv = 2, atom_dq = 1;
  bool v_in_regs = false;
  // mainloop_bwd_sm90_tma_gmma_ws.hpp, Mma_dKV_is_RS: P and dS stay in registers as the A
  // operand of the dV and dK GEMMs (P is then never written to shared memory).
  bool dkv_rs() const { return atom_sdp == 1 && atom_dkv == warpgroups && sdp_swapab && !dkv_swapab; }
};
Flash3BwdTile flash3_bwd_default_tile(std::uint64_t head_dim, bool causal);
// Stages of the Q (and LSE) pipeline: flash_bwd_launch_template.h, Stages = 2 on sm90.
constexpr std::uint32_t kFlash3BwdQStages = 2;
// The main kernel's shared memory (the mainloop's TensorStorage).
core::Bytes flash3_bwd_smem(const Flash3BwdTile& t, std::uint64_t head_dim, core::Bytes value_bytes);

// Sets bwd_block_m, bwd_block_n, bwd_warps of a resolved flash3 workload with pass fwdbwd;
// throws core::ConfigError when the tile does not fit the device's shared memory.
void flash3_resolve_backward(core::Workload& w, const core::DeviceSpec& device);
// Appends the backward's launches (preprocess, main, dQ postprocess; with GQA the dK and dV
// conversions) to a program whose workload is resolved.
void flash3_append_backward(core::TileProgram& p, const core::DeviceSpec& device);

// The forward's closed form (core::flash3_traffic) and, with pass fwdbwd, the backward's.
std::vector<core::LaunchTraffic> flash3_fwdbwd_traffic(const core::Workload& resolved, bool compulsory);

}  // namespace attnsim::kernels
