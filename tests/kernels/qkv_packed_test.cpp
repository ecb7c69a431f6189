// standard with qkv_packed (FlashAttention's benchmark attention_pytorch on a packed [B, N, 3, H,
// d] tensor): the forward's three layout copies and the backward's scale and stack kernels, their
// closed-form bytes, their place in the launch sequence, and the loader's rules for the key; and
// with scale_kernel, the scores' own scale kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"
#include "sim/core/io_counts.h"
#include "sim/engine/engine.h"
#include "tests/kernels/closed_form_check.h"

namespace attnsim::kernels {
namespace {

core::Workload standard_fwd(bool packed, bool causal) {
  core::Workload w;
  w.kernel = "standard";
  w.batch = 2;
  w.heads = 3;
  w.kv_heads = 3;
  w.seq_q = w.seq_kv = 300;
  w.head_dim = 64;
  w.causal = causal;
  w.qkv_packed = packed;
  return w;
}

// DRAM bytes (read, written) of tensor `t` over a run's launches.
std::pair<core::Bytes, core::Bytes> sum(const std::vector<core::KernelResult>& r, core::Tensor t) {
  core::Bytes read = 0, write = 0;
  for (const auto& k : r) {
    read += k.tensors.dram.by_tensor[static_cast<std::size_t>(t)].read;
    write += k.tensors.dram.by_tensor[static_cast<std::size_t>(t)].write;
  }
  return {read, write};
}

std::vector<std::string> launch_names(const core::TileProgram& p) {
  std::vector<std::string> names;
  for (const auto& l : p.launches) names.push_back(l->name());
  return names;
}

// The mask kernels (a mask broadcast over every head: PyTorch's non-contiguous elementwise loop)
// keep one value per thread in flight: 32 x the bytes one value reads per warp (fp16 scores with
// the bool mask: 96 B; with the benchmark's fp16 mask: 128 B). Contiguous elementwise kernels
// (the scale, the backward's grad * output) keep the device's allowance.
TEST(QkvPacked, MaskKernelsKeepOneValuePerThreadInFlight) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  auto allowance = [&](bool packed, const std::string& name) {
    core::Workload w = standard_fwd(packed, true);
    w.pass = core::Pass::kFwdBwd;
    w.scale_kernel = true;
    const core::TileProgram p = make_program(w, h100);
    for (const auto& l : p.launches)
      if (l->name() == name) return l->shape().inflight_bytes_per_warp;
    ADD_FAILURE() << name << " not launched";
    return core::Bytes{0};
  };
  EXPECT_EQ(allowance(false, "standard_mask"), 96u);
  EXPECT_EQ(allowance(false, "standard_bwd_mask"), 96u);
  EXPECT_EQ(allowance(true, "standard_mask"), 128u);
  EXPECT_EQ(allowance(false, "standard_scale"), 0u);
  EXPECT_EQ(allowance(false, "standard_bwd_softmax_mul"), 0u);
}

// scale_kernel: the scores' own scale multiply after QKᵀ (before the mask) and its MulBackward
// after the mask's backward: the kernel launches what the closed form counts, in its order.
TEST(QkvPacked, ScaleKernelLaunchesFollowTheClosedForm) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  core::Workload w = standard_fwd(false, true);
  w.pass = core::Pass::kFwdBwd;
  w.scale_kernel = true;
  const core::TileProgram p = make_program(w, h100);
  std::vector<std::string> form;
  for (const auto& l : kernels::closed_form_traffic(p.workload)) form.push_back(l.kernel_name);
  EXPECT_EQ(launch_names(p), form);
  EXPECT_EQ(launch_names(p)[1], "standard_scale");
  EXPECT_EQ(launch_names(p)[2], "standard_mask");
  EXPECT_NE(std::find(form.begin(), form.end(), "standard_bwd_scale"), form.end());
  // Only standard reads the key.
  EXPECT_THROW(config::workload_for_kernel("flash2", {{"scale_kernel", "true"}}), core::ConfigError);
  EXPECT_TRUE(config::workload_for_kernel("standard", {{"scale_kernel", "true"}}).scale_kernel);
}

// k's copy to `(b h) d s` transposes: each CTA writes 512 values of one d-row contiguously and
// reads them down k's column, one value per key row (a sector each), as PyTorch's copy kernel
// loops in the contiguous output's order; q's copy keeps rows of d values.
TEST(QkvPacked, KCopyReadsDownTheColumnsOfK) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  const core::TileProgram p = make_program(standard_fwd(true, false), h100);
  ASSERT_EQ(p.launches[1]->name(), "standard_k_copy");
  std::vector<core::TileOp> ops;
  ASSERT_TRUE(p.launches[1]->emit_step(0, 0, ops));
  const core::TileOp& load = ops.front();
  const core::TileOp& store = ops.back();
  EXPECT_EQ(load.kind, core::OpKind::kLoad);
  EXPECT_EQ(load.rows, 300u);  // seq 300 < 512: the whole column
  EXPECT_EQ(load.row_bytes, 2u);
  EXPECT_EQ(load.row_stride, 64u * 2);  // the next key's row
  EXPECT_EQ(store.kind, core::OpKind::kStore);
  EXPECT_EQ(store.rows, 1u);
  EXPECT_EQ(store.row_bytes, 300u * 2);
  const core::LaunchShape s = p.launches[1]->shape();
  EXPECT_EQ(s.grid_x * s.grid_y * s.grid_z, 64u * 3 * 2);  // d-rows x heads x batch
  ops.clear();
  ASSERT_TRUE(p.launches[0]->emit_step(0, 0, ops));  // q's copy: whole rows of d values
  EXPECT_EQ(ops.front().row_bytes, 64u * 2);
}

TEST(QkvPacked, CopiesQAndKBeforeQkAndVBeforePv) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  EXPECT_EQ(launch_names(make_program(standard_fwd(true, true), h100)),
            (std::vector<std::string>{"standard_q_copy", "standard_k_copy", "standard_qk", "standard_mask_full",
                                      "standard_mask_triu", "standard_mask_cast", "standard_mask", "standard_softmax",
                                      "standard_v_copy", "standard_pv"}));
  core::Workload fp32 = standard_fwd(true, true);
  fp32.dtype = core::DType::kFp32;  // `.to` the scores' own dtype: no cast kernel
  const auto names = launch_names(make_program(fp32, h100));
  EXPECT_EQ(std::find(names.begin(), names.end(), "standard_mask_cast"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "standard_mask_triu"), names.end());
  EXPECT_EQ(launch_names(make_program(standard_fwd(false, false), h100)),
            (std::vector<std::string>{"standard_qk", "standard_softmax", "standard_pv"}));
}

// With the L2 off the engine's bytes are the closed form's, and each copy reads and writes its
// tensor once: 2·B·H·N·d·v more of Q, K and V each than without the packed layout.
TEST(QkvPacked, ClosedFormBytesExactWithTheL2Off) {
  const core::DeviceSpec dev = config::load_device("h100-sxm", {{"l2.capacity_bytes", "0"}});
  for (bool causal : {false, true}) {
    const std::string what = causal ? "causal" : "not causal";
    const auto packed = testing::expect_closed_form_bytes(dev, standard_fwd(true, causal), what);
    const auto plain = testing::expect_closed_form_bytes(dev, standard_fwd(false, causal), what + ", unpacked");
    const core::Bytes copy = 2ull * 3 * 300 * 64 * 2;  // B·H·N·d·v
    for (core::Tensor t : {core::Tensor::kQ, core::Tensor::kK, core::Tensor::kV}) {
      EXPECT_EQ(sum(packed, t).first, sum(plain, t).first + copy) << what << " " << core::to_string(t);
      EXPECT_EQ(sum(packed, t).second, sum(plain, t).second + copy) << what << " " << core::to_string(t);
    }
    EXPECT_EQ(sum(packed, core::Tensor::kS), sum(plain, core::Tensor::kS)) << what;
    // Causal: the benchmark builds its mask (fp32 full: 4 B written per value; triu: 4 read, 4
    // written; the cast: 4 read, 2 written) and each head's add reads it in fp16; the unpacked mask
    // kernel reads a bool mask per head.
    const core::Bytes values = 300ull * 300;
    const std::pair<core::Bytes, core::Bytes> built{values * (4 + 4 + 2 * 3 * 2), values * (4 + 4 + 2)};
    const std::pair<core::Bytes, core::Bytes> none{};
    EXPECT_EQ(sum(packed, core::Tensor::kMask), causal ? built : none) << what;
    EXPECT_EQ(sum(plain, core::Tensor::kMask).first, causal ? values * 2 * 3 : 0) << what;
  }
}

// The backward of attention_pytorch on a packed qkv, in autograd's order: the GEMMs and softmax
// backward as unpacked; no mask kernel (the benchmark's mask is added, and an add's gradient
// passes through); baddbmm's alpha on dQ and dK, each by its own kernel after its GEMM; then
// unbind's backward, a stack of dq, dk, dv into the packed gradient: one copy kernel each (a 5-D
// cat), and no AccumulateGrad clone of dK.
TEST(QkvPacked, BackwardScalesAndStacksTheGradients) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  for (bool causal : {false, true}) {
    core::Workload w = standard_fwd(true, causal);
    w.pass = core::Pass::kFwdBwd;
    const std::vector<std::string> names = launch_names(make_program(w, h100));
    const std::vector<std::string> bwd(std::find(names.begin(), names.end(), "standard_bwd_dp"), names.end());
    EXPECT_EQ(bwd, (std::vector<std::string>{"standard_bwd_dp", "standard_bwd_dv", "standard_bwd_softmax_mul",
                                             "standard_bwd_softmax", "standard_bwd_dq", "standard_bwd_dq_scale",
                                             "standard_bwd_dk", "standard_bwd_dk_scale", "standard_bwd_dq_copy",
                                             "standard_bwd_dk_copy", "standard_bwd_dv_copy"}))
        << (causal ? "causal" : "not causal");
  }
  core::Workload plain = standard_fwd(false, true);
  plain.pass = core::Pass::kFwdBwd;
  const std::vector<std::string> names = launch_names(make_program(plain, h100));
  EXPECT_NE(std::find(names.begin(), names.end(), "standard_bwd_mask"), names.end());
  EXPECT_EQ(names.back(), "standard_bwd_dk_copy");
  EXPECT_EQ(std::find(names.begin(), names.end(), "standard_bwd_dq_copy"), names.end());
}

// dk comes out of its GEMM as [d, s] (qᵀ·dS) and is copied into rows of d values: read down its
// columns, a value per key row, as k's forward copy; dq's and dv's copies move whole rows.
TEST(QkvPacked, BackwardDkCopyReadsDownTheColumns) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  core::Workload w = standard_fwd(true, false);
  w.pass = core::Pass::kFwdBwd;
  const core::TileProgram p = make_program(w, h100);
  for (std::size_t i = 0; i < p.launches.size(); ++i) {
    const std::string name = p.launches[i]->name();
    if (name.find("_copy") == std::string::npos || name.rfind("standard_bwd_", 0) != 0) continue;
    std::vector<core::TileOp> ops;
    ASSERT_TRUE(p.launches[i]->emit_step(0, 0, ops));
    const bool dk = name == "standard_bwd_dk_copy";
    EXPECT_EQ(ops.front().tensor, dk ? core::Tensor::kDK : name == "standard_bwd_dq_copy" ? core::Tensor::kDQ
                                                                                        : core::Tensor::kDV)
        << name;
    EXPECT_EQ(ops.front().row_bytes, dk ? 2u : 64u * 2) << name;
  }
}

// The packed backward's bytes are exact with the L2 off; against the unpacked backward it moves
// dq and dv twice more (scale and stack of dq, stack of dv) and dk once more (its scale; the
// stack's copy replaces AccumulateGrad's), each a read and a write of B·H·N·d·v; causal also
// drops the mask's backward (its S-sized dS read and write and the mask's bytes).
TEST(QkvPacked, BackwardClosedFormBytesExactWithTheL2Off) {
  const core::DeviceSpec dev = config::load_device("h100-sxm", {{"l2.capacity_bytes", "0"}});
  const core::Bytes copy = 2ull * 3 * 300 * 64 * 2;  // B·H·N·d·v
  for (bool causal : {false, true}) {
    const std::string what = causal ? "causal fwdbwd" : "fwdbwd";
    core::Workload packed = standard_fwd(true, causal), plain = standard_fwd(false, causal);
    packed.pass = plain.pass = core::Pass::kFwdBwd;
    const auto a = testing::expect_closed_form_bytes(dev, packed, what);
    const auto b = testing::expect_closed_form_bytes(dev, plain, what + ", unpacked");
    for (auto [t, extra] : {std::pair{core::Tensor::kDQ, 2}, {core::Tensor::kDK, 1}, {core::Tensor::kDV, 1}}) {
      EXPECT_EQ(sum(a, t).first, sum(b, t).first + extra * copy) << what << " " << core::to_string(t);
      EXPECT_EQ(sum(a, t).second, sum(b, t).second + extra * copy) << what << " " << core::to_string(t);
    }
    const core::Bytes s_bytes = causal ? 2ull * 3 * 300 * 300 * 2 : 0;  // the mask backward's dS
    EXPECT_EQ(sum(a, core::Tensor::kDS).first + s_bytes, sum(b, core::Tensor::kDS).first) << what;
    EXPECT_EQ(sum(a, core::Tensor::kDS).second + s_bytes, sum(b, core::Tensor::kDS).second) << what;
  }
}

TEST(QkvPacked, CopiesTakeTime) {
  const core::DeviceSpec h100 = config::load_device("h100-sxm");
  auto total = [&](bool packed) {
    double ns = 0;
    for (const auto& k : engine::simulate(h100, make_program(standard_fwd(packed, false), h100))) ns += k.totals.time_ns;
    return ns;
  };
  EXPECT_GT(total(true), total(false));
}

TEST(QkvPacked, LoaderRejectsWhatAPackedTensorCannotBe) {
  auto message = [](std::vector<config::Override> o) {
    try {
      config::workload_for_kernel("standard", o);
    } catch (const core::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({{"qkv_packed", "true"}, {"heads", "8"}, {"kv_heads", "2"}}).find("qkv_packed: needs kv_heads equal to heads"),
            std::string::npos);
  EXPECT_EQ(message({{"qkv_packed", "true"}, {"pass", "fwdbwd"}}), "accepted");
  EXPECT_NE(message({{"qkv_packed", "true"}, {"seq_q", "1"}, {"seq_kv", "128"}}).find("qkv_packed: needs seq_q equal"),
            std::string::npos);
  EXPECT_EQ(message({{"qkv_packed", "true"}, {"heads", "8"}}), "accepted");
  EXPECT_EQ(message({{"qkv_packed", "false"}, {"pass", "fwdbwd"}}), "accepted");
  try {
    config::workload_for_kernel("flash2", {{"qkv_packed", "true"}});
    ADD_FAILURE() << "qkv_packed accepted for flash2";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("qkv_packed: is not read by kernel 'flash2'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnsim::kernels
