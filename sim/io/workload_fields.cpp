#include "sim/io/workload_fields.h"

#include "sim/io/json_writer.h"

namespace attnsim::io {

namespace {
Cell u(std::uint64_t v) { return static_cast<std::int64_t>(v); }
Cell s(std::string_view v) { return std::string(v); }
}  // namespace

std::string cell_to_string(const Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&c)) return JsonWriter::format_number(*d);
  if (const auto* b = std::get_if<bool>(&c)) return *b ? "true" : "false";
  return std::get<std::string>(c);
}

Fields workload_fields(const core::Workload& w) {
  return {
      {"kernel", s(w.kernel)},
      {"batch", u(w.batch)},
      {"heads", u(w.heads)},
      {"kv_heads", u(w.kv_heads ? w.kv_heads : w.heads)},
      {"seq_q", u(w.seq_q)},
      {"seq_kv", u(w.seq_kv)},
      {"head_dim", u(w.head_dim)},
      {"dtype", s(core::to_string(w.dtype))},
      {"causal", w.causal},
      {"pass", s(core::to_string(w.pass))},
      {"block_m", u(w.block_m)},
      {"block_n", u(w.block_n)},
      {"block_k", u(w.block_k)},
      {"gemm_cluster", u(w.gemm_cluster)},
      {"gemm_ws", w.gemm_ws},
      {"qkv_packed", w.qkv_packed},
      {"scale_kernel", w.scale_kernel},
      {"pytorch", s(w.pytorch)},
      {"warps", u(w.warps)},
      {"stages", u(w.stages)},
      {"cta_order", s(core::to_string(w.cta_order))},
      {"impl", s(core::to_string(w.impl))},
      {"regs_per_thread", u(w.regs_per_thread)},
      {"smem_per_cta", u(w.smem_per_cta)},
      {"stack_frame_bytes", u(w.stack_frame_bytes)},
      {"num_splits", u(w.num_splits)},
      {"page_size", u(w.page_size)},
      {"page_placement", s(core::to_string(w.page_placement))},
      {"page_seed", u(w.page_seed)},
      {"kv_lengths", s(core::to_string(w.kv_lengths))},
      {"consumer_warpgroups", u(w.consumer_warpgroups)},
      {"pingpong", static_cast<std::int64_t>(w.pingpong)},
      {"intrawg_overlap", static_cast<std::int64_t>(w.intrawg_overlap)},
      {"tma", static_cast<std::int64_t>(w.tma)},
      {"sram_bytes", u(w.sram_bytes)},
      {"functional", w.functional},
      {"seed", u(w.seed)},
      {"functional_inputs", s(core::to_string(w.functional_inputs))},
      {"fp8_scales", s(core::to_string(w.fp8_scales))},
      {"incoherent_processing", w.incoherent_processing},
      {"working_set_bytes", u(w.working_set_bytes)},
      {"loads", u(w.loads)},
      {"programs", u(w.programs)},
      {"bytes_per_step", u(w.bytes_per_step)},
      {"total_bytes", u(w.total_bytes)},
  };
}

Fields device_fields(const core::DeviceSpec& d) {
  return {
      {"name", s(d.name)},
      {"kind", s(d.kind == core::DeviceKind::kGpu ? "gpu" : "scratchpad")},
      {"compute_capability", u(d.compute_capability)},
      {"clock_ghz", d.clock_ghz},
      {"sm_count", u(d.sm.count)},
      {"hbm_capacity_bytes", u(d.hbm.capacity_bytes)},
      {"hbm_bandwidth_gbps", d.hbm.bandwidth_gbps},
      {"l2_capacity_bytes", u(d.l2.capacity_bytes)},
      {"l2_bandwidth_gbps", d.l2.bandwidth_gbps},
      {"shared_mem_per_sm_bytes", u(d.sm.shared_mem_per_sm_bytes)},
      {"shared_mem_per_block_optin_bytes", u(d.sm.shared_mem_per_block_optin_bytes)},
      {"sram_bytes_per_core", u(d.scratchpad.sram_bytes_per_core)},
  };
}

}  // namespace attnsim::io
