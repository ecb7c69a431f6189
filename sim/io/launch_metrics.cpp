// The Nsight Compute / attnsim__ names of a launch's typed totals.
#include "sim/io/launch_metrics.h"

#include <algorithm>

namespace attnsim::io {

core::Metrics launch_metrics(const core::LaunchTotals& t) {
  core::Metrics m;
  const core::MemoryCounters& c = t.memory;
  const core::OccupancyResult& occ = t.occupancy;
  core::set_metric(m, "dram__bytes_read.sum", static_cast<double>(t.dram_read));
  core::set_metric(m, "dram__bytes_write.sum", static_cast<double>(t.dram_write));
  core::set_metric(m, "lts__t_bytes.sum", static_cast<double>(c.lts_bytes));
  core::set_metric(m, "lts__t_sector_hit_rate.pct",
                   c.lts_sectors ? 100.0 * static_cast<double>(c.lts_hit_sectors) / static_cast<double>(c.lts_sectors) : 0);
  core::set_metric(m, "gpu__time_duration.sum", t.time_ns);
  core::set_metric(m, "sm__warps_active.avg.pct_of_peak_sustained_active",
                   t.active_cycles > 0 ? 100.0 * t.warps_integral / (t.active_cycles * t.max_warps_per_sm) : 0);
  core::set_metric(m, "sm__maximum_warps_per_active_cycle_pct", occ.max_warps_pct);
  core::set_metric(m, "launch__occupancy_limit_blocks", occ.limit_blocks);
  core::set_metric(m, "launch__occupancy_limit_registers", occ.limit_registers);
  core::set_metric(m, "launch__occupancy_limit_shared_mem", occ.limit_shared_mem);
  core::set_metric(m, "launch__occupancy_limit_warps", occ.limit_warps);
  core::set_metric(m, "launch__grid_size", static_cast<double>(t.ctas));
  core::set_metric(m, "launch__block_size", t.threads_per_cta);
  core::set_metric(m, "launch__registers_per_thread", t.regs_per_thread);
  core::set_metric(m, "launch__shared_mem_per_block", static_cast<double>(t.smem_per_cta));
  core::set_metric(m, "launch__waves_per_multiprocessor", t.waves);
  core::set_metric(m, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", static_cast<double>(t.stats.bank_conflicts));
  core::set_metric(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", static_cast<double>(t.stats.wavefronts));
  core::set_metric(m, "dram__bytes.sum.per_second",
                   t.time_ns > 0 ? static_cast<double>(t.dram_read + t.dram_write) / (t.time_ns * 1e-9) : 0);
  core::set_metric(m, "attnsim__events", static_cast<double>(t.stats.events));
  // sim.mode (0 full, 1 sampled), ops simulated over the launch's ops, estimated relative error
  // of the time in percent (docs/sampling.md).
  core::set_metric(m, "attnsim__sim_mode", t.sampled ? 1.0 : 0.0);
  core::set_metric(m, "attnsim__sampled_fraction", t.sampled_fraction);
  core::set_metric(m, "attnsim__sampling_error_pct", 100.0 * t.sampling_error);
  core::set_metric(m, "attnsim__tail_pct", 100.0 * t.tail);
  core::set_metric(m, "attnsim__cycles", t.cycles);
  core::set_metric(m, "attnsim__flops", t.stats.flops);
  core::set_metric(m, "attnsim__l2_near_hits", static_cast<double>(c.l2_near_hits));
  core::set_metric(m, "attnsim__l2_far_hits", static_cast<double>(c.l2_far_hits));
  core::set_metric(m, "attnsim__l2_misses", static_cast<double>(c.l2_misses));
  core::set_metric(m, "attnsim__l2_request_bytes", static_cast<double>(c.l2_request_bytes));
  core::set_metric(m, "attnsim__l1_hits", static_cast<double>(c.l1_hits));
  core::set_metric(m, "attnsim__dram_busy_cycles", t.busy.dram);
  core::set_metric(m, "attnsim__l2_busy_cycles", t.busy.l2);
  core::set_metric(m, "attnsim__dma_busy_cycles", t.busy.dma);
  core::set_metric(m, "attnsim__lsu_busy_cycles", t.busy.lsu);
  core::set_metric(m, "attnsim__smem_busy_cycles", t.busy.smem);
  core::set_metric(m, "attnsim__tensor_busy_cycles", t.busy.tensor);
  core::set_metric(m, "attnsim__fp32_busy_cycles", t.busy.fp32);
  core::set_metric(m, "attnsim__sfu_busy_cycles", t.busy.sfu);
  core::set_metric(m, "attnsim__issue_busy_cycles", t.busy.issue);
  if (t.cycles_per_load) core::set_metric(m, "attnsim__cycles_per_load", *t.cycles_per_load);
  return m;
}

bool is_sampling_metric(std::string_view name) {
  return name == "attnsim__sim_mode" || name == "attnsim__sampled_fraction";
}

void total_sampling_metrics(const std::vector<core::KernelResult>& kernels, core::Metrics& totals) {
  double mode = 0, ops = 0, simulated = 0;
  for (const core::KernelResult& k : kernels) {
    mode = std::max(mode, k.totals.sampled ? 1.0 : 0.0);
    // Weight each launch's fraction by its simulated events (a proxy of its ops).
    const double events = static_cast<double>(k.totals.stats.events);
    const double f = k.totals.sampled_fraction > 0 ? k.totals.sampled_fraction : 1.0;
    simulated += events;
    ops += events / f;
  }
  core::set_metric(totals, "attnsim__sim_mode", mode);
  core::set_metric(totals, "attnsim__sampled_fraction", ops > 0 ? simulated / ops : 1.0);
}

void name_launch_metrics(std::vector<core::KernelResult>& kernels) {
  for (core::KernelResult& k : kernels) k.metrics = launch_metrics(k.totals);
}

}  // namespace attnsim::io
