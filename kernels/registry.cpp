#include "kernels/registry.h"

#include "kernels/factories.h"
#include "kernels/flash3_bwd.h"
#include "kernels/functional.h"
#include "kernels/kernel_defaults.h"
#include "sim/core/errors.h"
#include "sim/core/occupancy.h"

namespace attnsim::kernels {

namespace {

// Small shapes, both causal settings, MHA and GQA, forward and (except decode) backward.
void attention_grid(const char* kernel, bool decode, std::vector<core::Workload>& out) {
  for (bool causal : {false, true})
    for (std::uint64_t kvh : {4, 1})
      for (auto pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
        if (pass == core::Pass::kFwdBwd && decode) continue;
        core::Workload w;
        w.kernel = kernel;
        w.batch = 2;
        w.heads = 4;
        w.kv_heads = kvh;
        w.seq_q = decode ? 4 : 100;
        w.seq_kv = decode ? 300 : 100;
        w.head_dim = 16;
        w.causal = causal;
        w.pass = pass;
        w.block_m = 32;
        w.block_n = 32;
        w.block_k = 16;
        w.warps = 4;
        w.num_splits = decode ? 3 : 0;
        out.push_back(w);
      }
}
// GQA decode: one query token, FA-2's packed schedule (query heads of a group as rows); split-KV
// counts 0 (the heuristic) and 3 where the kernel has splits.
void gqa_decode_grid(const char* kernel, bool splits, std::vector<core::Workload>& out) {
  for (std::uint64_t kvh : {2, 1})
    for (std::uint64_t n : {0, 3}) {
      if (n != 0 && !splits) continue;
      core::Workload w;
      w.kernel = kernel;
      w.batch = 2;
      w.heads = 8;
      w.kv_heads = kvh;
      w.seq_q = 1;
      w.seq_kv = 300;
      w.head_dim = 16;
      w.causal = n == 3;
      w.block_m = 32;
      w.block_n = 32;
      w.warps = 4;
      w.num_splits = n;
      out.push_back(w);
    }
}
// Paged KV cache and per-sequence lengths: page sizes below, at, not dividing and above block_n,
// both placements, a list, a uniform draw and the fixed length, packed GQA and MHA, 1 / 3 / auto
// splits (a short sequence leaves later splits empty), and the contiguous cache with a list.
void paged_decode_grid(std::vector<core::Workload>& out) {
  struct Case {
    std::uint64_t page;
    core::PagePlacement placement;
    core::KvLengths::Kind lengths;
    std::uint64_t heads, kv_heads, seq_q, splits;
    bool causal;
  };
  using P = core::PagePlacement;
  using K = core::KvLengths::Kind;
  const Case cases[] = {
      {1, P::kShuffled, K::kList, 8, 2, 1, 3, false},      {16, P::kContiguous, K::kList, 4, 4, 4, 0, false},
      {100, P::kShuffled, K::kUniform, 8, 1, 1, 1, false}, {32, P::kShuffled, K::kFixed, 8, 2, 4, 3, true},
      {256, P::kContiguous, K::kList, 8, 2, 1, 2, false},  {0, P::kContiguous, K::kList, 8, 2, 1, 3, false},
      {7, P::kShuffled, K::kUniform, 4, 2, 2, 3, false},
  };
  for (const Case& c : cases) {
    core::Workload w;
    w.kernel = "flash_decode";
    w.batch = 4;
    w.heads = c.heads;
    w.kv_heads = c.kv_heads;
    w.seq_q = c.seq_q;
    w.seq_kv = 300;
    w.head_dim = 16;
    w.causal = c.causal;
    w.block_n = 32;
    w.warps = 4;
    w.num_splits = c.splits;
    w.page_size = c.page;
    w.page_placement = c.placement;
    w.page_seed = 11;
    w.kv_lengths.kind = c.lengths;
    w.kv_lengths.list = {300, 17, 129, 64};
    w.kv_lengths.min = 1;
    w.kv_lengths.max = 300;
    w.kv_lengths.seed = 5;
    if (c.lengths != K::kList) w.kv_lengths.list.clear();
    out.push_back(w);
  }
}
void standard_grid(std::vector<core::Workload>& out) {
  const std::size_t first = out.size();
  attention_grid("standard", false, out);
  // A packed qkv (FlashAttention's benchmark): the forward's three layout copies; causal with the
  // backward's scale and stack kernels.
  for (bool causal : {false, true}) {
    core::Workload w = out[first];  // MHA, forward, not causal
    w.qkv_packed = true;
    w.causal = causal;
    if (causal) w.pass = core::Pass::kFwdBwd;
    out.push_back(w);
  }
  // The scores scaled by their own kernel (forward and MulBackward), causal fwd+bwd with GQA.
  core::Workload scaled = out[first];
  scaled.scale_kernel = true;
  scaled.causal = true;
  scaled.kv_heads = 1;
  scaled.pass = core::Pass::kFwdBwd;
  out.push_back(scaled);
  // PyTorch before 2.4: rows of more than 1024 values through the three-pass block kernels; 2.4
  // to 2.6: the shared-memory forward and the backward reading its gradient twice.
  for (const char* release : {"2.3", "2.5"}) {
    core::Workload old = out[first];
    old.pytorch = release;
    old.seq_q = old.seq_kv = 1104;
    old.pass = core::Pass::kFwdBwd;
    out.push_back(old);
  }
}
void flash1_grid(std::vector<core::Workload>& out) { attention_grid("flash1", false, out); }
void flash2_grid(std::vector<core::Workload>& out) {
  const std::size_t first = out.size();
  attention_grid("flash2", false, out);
  gqa_decode_grid("flash2", false, out);
  // impl triton: its own load pipeline (never FA-2's 2-stage schedule), causal and not, fwdbwd.
  for (bool causal : {false, true}) {
    core::Workload w = out[first];  // MHA, forward, not causal
    w.impl = core::KernelImpl::kTriton;
    w.causal = causal;
    w.block_m = 64;
    w.stages = 3;
    w.pass = causal ? core::Pass::kFwdBwd : core::Pass::kFwd;
    out.push_back(w);
  }
  // impl triton's TMA kernel (on devices with TMA), one and two warp groups (wgmma: 128-row
  // tiles, 100 valid rows).
  for (std::uint32_t warps : {4u, 8u}) {
    core::Workload w = out[first];
    w.impl = core::KernelImpl::kTriton;
    w.tma = 1;
    w.block_m = 128;
    w.warps = warps;
    w.stages = 3;
    out.push_back(w);
  }
}
// flash3: fp16 and fp8, causal and not, MHA and GQA, 1 to 3 consumer warp groups (ping-pong on
// and off), partial blocks (100 rows and keys over 64-row warp groups and 32-key blocks).
void flash3_grid(std::vector<core::Workload>& out) {
  for (auto dtype : {core::DType::kFp16, core::DType::kFp8})
    for (bool causal : {false, true})
      for (std::uint64_t kvh : {4, 1})
        for (std::uint32_t wg : {1, 2, 3}) {
          core::Workload w;
          w.kernel = "flash3";
          w.batch = 2;
          w.heads = 4;
          w.kv_heads = kvh;
          w.seq_q = 100;
          w.seq_kv = causal ? 100 : 130;
          w.head_dim = 32;
          w.dtype = dtype;
          w.causal = causal;
          w.block_m = 64 * wg;
          w.block_n = 32;
          w.pingpong = wg == 2 && kvh == 1 ? 0 : -1;
          out.push_back(w);
        }
  // Backward (fp16; FA-3 has no fp8 backward): head dim 32 (128 x 128 backward tiles) and 128
  // (80 x 128, causal 64 x 128), causal and not, MHA and GQA, ragged query and key blocks.
  for (std::uint64_t d : {32, 128})
    for (bool causal : {false, true})
      for (std::uint64_t kvh : {4, 1}) {
        core::Workload w;
        w.kernel = "flash3";
        w.batch = 2;
        w.heads = 4;
        w.kv_heads = kvh;
        w.seq_q = 300;
        w.seq_kv = causal ? 300 : 330;
        w.head_dim = d;
        w.causal = causal;
        w.pass = core::Pass::kFwdBwd;
        out.push_back(w);
      }
}
void flash_decode_grid(std::vector<core::Workload>& out) {
  attention_grid("flash_decode", true, out);
  gqa_decode_grid("flash_decode", true, out);
  // One split: no combine launch, the split kernel writes O and LSE.
  core::Workload w = out.back();
  w.num_splits = 1;
  out.push_back(w);
  paged_decode_grid(out);
}

#define ATTENTION_KEYS                                                                                         \
  "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "dtype", "causal", "pass", "block_m", "block_n", \
      "warps", "stages", "cta_order", "regs_per_thread", "smem_per_cta", "functional", "seed",             \
      "functional_inputs", "fp8_scales", "incoherent_processing"

}  // namespace

const std::vector<KernelEntry>& kernel_registry() {
  static const std::vector<KernelEntry> table = {
      {"standard", &make_standard, "textbook attention: GEMM S=QK^T, row softmax, GEMM O=PV",
       &core::standard_traffic, &run_functional, &standard_grid, {ATTENTION_KEYS, "block_k", "gemm_cluster", "gemm_ws", "qkv_packed", "scale_kernel", "pytorch"},
       false, true, {"standard", "std"}},
      {"flash1", &make_flash1, "FlashAttention Algorithm 1: outer loop over K/V blocks", &core::flash1_traffic,
       &run_functional, &flash1_grid, {ATTENTION_KEYS, "sram_bytes"}, false, false, {"flash1"}},
      {"flash2", &make_flash2, "FlashAttention-2: one CTA per (batch, head, query block)", &core::flash2_traffic,
       &run_functional, &flash2_grid, {ATTENTION_KEYS, "stack_frame_bytes", "impl", "tma"}, true, false,
       {"flash2", "sdpa_flash", "triton", "triton_flash"},
       // Decode rows (seq_q = 1) run what FA-2's mha_fwd launches: flash_fwd_kernel where
       // num_splits_heuristic picks one split (kernels.csv's MHA rows), the split-KV pair otherwise
       // (make_flash2). flash_decode is the fallback for sweeps that only simulate flash_decode.
       "flash_decode",
       {{"sdpa_flash", "fa2"}, {"flash2", "fa2"}, {"triton", "triton"}, {"triton_flash", "triton"}}},
      {"flash3", &make_flash3,
       "FlashAttention-3: TMA producer, 64-row consumer warp groups, async wgmma, ping-pong; backward",
       &flash3_fwdbwd_traffic, &run_functional, &flash3_grid,
       {"batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "dtype", "causal", "pass", "block_m", "block_n",
        "warps", "stages", "cta_order", "regs_per_thread", "smem_per_cta", "functional", "seed",
        "functional_inputs", "fp8_scales", "incoherent_processing", "consumer_warpgroups", "pingpong", "intrawg_overlap"},
       false, false, {"flash3", "fa3"}, nullptr, {}, 90},
      {"flash_decode", &make_flash_decode, "split-KV decoding with a reduction kernel", &core::flash_decode_traffic,
       &run_functional, &flash_decode_grid, {ATTENTION_KEYS, "num_splits", "page_size", "page_placement", "page_seed", "kv_lengths"}, false, false, {"flash_decode"}},
      {"pointer_chase", &make_pointer_chase, "one thread, dependent loads over a random cycle", nullptr, nullptr,
       nullptr, {"working_set_bytes", "loads", "seed"}, false, false, {}},
      {"stream_read", &make_stream_read, "CTAs reading disjoint slices of a buffer", nullptr, nullptr, nullptr,
       {"programs", "bytes_per_step", "total_bytes", "warps", "stages"}, false, false, {}},
      {"stream_copy", &make_stream_copy, "CTAs copying disjoint slices of a buffer to a second one", nullptr, nullptr,
       nullptr, {"programs", "bytes_per_step", "total_bytes", "warps", "stages"}, false, false, {}},
  };
  return table;
}

#undef ATTENTION_KEYS

const KernelEntry* find_kernel(std::string_view name, const std::vector<KernelEntry>& table) {
  for (const auto& e : table)
    if (name == e.name) return &e;
  return nullptr;
}

const KernelEntry* find_kernel(std::string_view name) { return find_kernel(name, kernel_registry()); }

std::optional<core::KernelImpl> parse_kernel_impl(std::string_view value) {
  for (core::KernelImpl i : {core::KernelImpl::kFa2, core::KernelImpl::kTriton})
    if (value == core::to_string(i)) return i;
  return std::nullopt;
}

std::string_view measured_impl(const KernelEntry& entry, std::string_view variant) {
  for (const auto& [name, impl] : entry.measured_impls)
    if (name == variant) return impl;
  return {};
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> out;
  for (const auto& e : kernel_registry()) out.emplace_back(e.name);
  return out;
}

core::TileProgram make_program(const core::Workload& workload, const core::DeviceSpec& device) {
  return make_program(workload, device, kernel_registry());
}

namespace {

// Refuses a launch that no SM of `device` can hold, before anything runs, so that `sweep
// --dry-run` calls such a point impossible as the sweep does. The message names the workload key
// that sized it: `warps` where the launch's threads are the workload's warps, else
// `regs_per_thread` (the kernel's own thread count, e.g. a softmax row kernel).
void check_launches_fit(const core::TileProgram& program, const core::DeviceSpec& device) {
  if (device.kind != core::DeviceKind::kGpu) return;  // scratchpad cores: the CTA scheduler's SRAM check
  const core::Workload& w = program.workload;
  for (const auto& launch : program.launches) {
    const core::LaunchShape s = launch->shape();
    core::OccupancyInput in;
    in.threads_per_block = s.threads_per_cta;
    in.regs_per_thread = s.regs_per_thread;
    in.smem_per_block = s.smem_per_cta();
    const std::string where = "launch '" + launch->name() + "': ", on = " on '" + device.name + "'";
    const std::string warps = std::to_string(s.warps_per_cta(device.sm.warp_size)) + " warps (" +
                              std::to_string(s.threads_per_cta) + " threads)";
    const std::string sized_by = w.warps != 0 && s.threads_per_cta == w.warps * device.sm.warp_size ? "warps"
                                                                                                    : "regs_per_thread";
    try {
      if (core::compute_occupancy(device.sm, in).active_blocks > 0) continue;
    } catch (const core::ConfigError& e) {
      // compute_occupancy names its inputs (threads, regs, smem); a regs problem within the
      // per-thread limit is the block's total.
      const core::ConfigProblem& p = e.problems().front();
      if (p.key_path == "threads")
        throw core::ConfigError(core::ConfigProblem{
            "", 0, sized_by, where + warps + " exceed the " + std::to_string(device.sm.max_threads_per_block) +
                                 " threads a block may have" + on});
      if (p.key_path == "regs" && s.regs_per_thread <= device.sm.max_registers_per_thread)
        throw core::ConfigError(core::ConfigProblem{
            "", 0, sized_by, where + warps + " x " + std::to_string(s.regs_per_thread) +
                                 " registers per thread exceed the " + std::to_string(device.sm.max_registers_per_block) +
                                 " registers one block may use" + on});
      throw core::ConfigError(core::ConfigProblem{
          "", 0, p.key_path == "smem" ? "smem_per_cta" : p.key_path == "regs" ? "regs_per_thread" : p.key_path,
          where + p.message + on});
    }
    throw core::ConfigError(core::ConfigProblem{"", 0, sized_by, where + "no CTA of it fits on an SM" + on});
  }
}

}  // namespace

core::TileProgram make_program(const core::Workload& workload, const core::DeviceSpec& device,
                               const std::vector<KernelEntry>& table) {
  if (const KernelEntry* e = find_kernel(workload.kernel, table)) {
    core::TileProgram program = e->make(workload, device);
    check_launches_fit(program, device);
    return program;
  }
  std::string known;
  for (const auto& e : table) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw core::ConfigError(core::ConfigProblem{"", 0, "kernel",
                                              "unknown kernel '" + workload.kernel + "' (known: " + known + ")"});
}

std::vector<core::LaunchTraffic> closed_form_traffic(const core::Workload& resolved) {
  const KernelEntry* e = find_kernel(resolved.kernel);
  return e && e->closed_form ? e->closed_form(resolved, false) : std::vector<core::LaunchTraffic>{};
}

std::vector<core::LaunchTraffic> compulsory_traffic(const core::Workload& resolved) {
  const KernelEntry* e = find_kernel(resolved.kernel);
  return e && e->closed_form ? e->closed_form(resolved, true) : std::vector<core::LaunchTraffic>{};
}

bool runs_on(const KernelEntry& e, const core::DeviceSpec& device) {
  if (e.min_compute_capability == 0) return true;
  return device.kind == core::DeviceKind::kGpu && device.compute_capability >= e.min_compute_capability;
}

std::vector<core::Workload> check_grid(const core::DeviceSpec& device) {
  std::vector<core::Workload> out;
  for (const auto& e : kernel_registry())
    if (e.check_grid && runs_on(e, device)) e.check_grid(out);
  // TMA copies (flash2 impl triton's `tma`) need a device with TMA.
  if (!KernelDefaults::has_tma(device)) std::erase_if(out, [](const core::Workload& w) { return w.tma == 1; });
  return out;
}

std::vector<core::Workload> check_grid() {
  std::vector<core::Workload> out;
  for (const auto& e : kernel_registry())
    if (e.check_grid) e.check_grid(out);
  return out;
}

}  // namespace attnsim::kernels
