// The end of a launch: the typed totals handed to sim/io, the pipes' busy cycles, the sampled
// time series and the progress reports.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>

#include "sim/engine/launch_simulator.h"

namespace attnsim::engine {

template <class Memory>
void LaunchSimulator<Memory>::take_sample(double now) {
  SampleSeries::Sample x;
  x.t = now;
  x.dram_bytes = static_cast<double>(memory_.hbm().bytes_read() + memory_.hbm().bytes_written());
  x.lts_bytes = static_cast<double>(memory_.counters().lts_bytes);
  std::uint64_t warps = 0;
  for (const Sm& sm : sms_) warps += sm.warps;
  const double peak = static_cast<double>(device_.sm.max_warps_per_sm) * static_cast<double>(sms_.size());
  x.warps_pct = peak > 0 ? 100.0 * static_cast<double>(warps) / peak : 0;
  series_.record(x);
}

template <class Memory>
void LaunchSimulator<Memory>::report_progress(double now, bool done) const {
  const std::string name = launch_.name();  // outlives the call
  LaunchProgress p;
  p.name = name;
  p.ctas_retired = scheduler_.retired();
  p.ctas = scheduler_.num_ctas();
  p.events = stats_.events;
  p.cycles = now;
  p.done = done;
  options_.progress(p);
}

template <class Memory>
BusyCycles LaunchSimulator<Memory>::busy_cycles() const {
  auto pipe = [](double units, double per_cycle) { return per_cycle > 0 ? units / per_cycle : 0.0; };
  const core::SmSpec& sm = device_.sm;
  BusyCycles b;
  b.dram = memory_.hbm().busy_cycles();
  b.l2 = memory_.l2_busy_cycles();
  b.dma = memory_.dma_busy_cycles();
  b.lsu = pipe(static_cast<double>(stats_.lsu_bytes), sm.load_bytes_per_cycle);
  b.smem = static_cast<double>(stats_.wavefronts);  // one wavefront per cycle
  if (access_.fills_take_banks())  // and the async copies' writes, a wavefront per banks x width bytes
    b.smem += static_cast<double>(stats_.fill_bytes) / static_cast<double>(banks_.wavefront_bytes());
  const double tensor_clock = sm.tensor_clock_ghz > 0 ? sm.tensor_clock_ghz / device_.clock_ghz : 1.0;
  b.tensor = pipe(stats_.mma_flops, sm.tensor_flops_per_cycle * tensor_clock);
  b.fp32 = pipe(stats_.fp32_ops, sm.fp32_flops_per_cycle / 2);  // instructions (Sm::from_spec)
  b.sfu = pipe(stats_.exp_ops, sm.exp_per_cycle);
  // Issue slots: kIssue instructions and every FP32 and MUFU instruction.
  b.issue = pipe(stats_.issue_ops + stats_.fp32_ops + stats_.exp_ops,
                 static_cast<double>(std::max(1u, sm.schedulers_per_sm)) * std::max(1u, sm.warp_size));
  return b;
}

template <class Memory>
core::KernelResult LaunchSimulator<Memory>::results(double end) {
  for (Sm& sm : sms_) sm.set_warps(sm.warps, end);
  if (sampler_.enabled()) add_skipped_stats();
  std::array<double, core::kNumTensors> dram_read_factor;  // correct_timed_misses
  dram_read_factor.fill(1.0);
  if constexpr (std::is_same_v<Memory, MemorySystem>)
    if (sampler_.enabled() && options_.sampled_timed_miss_correction) dram_read_factor = memory_.correct_timed_misses();
  const BusyCycles busy = busy_cycles();
  // Dirty lines count as this launch's DRAM writes unless the device asks for Nsight Compute
  // accounting (l2.count_final_writeback: false), which stops counting when the kernel ends.
  const core::Bytes written_back_in_launch = memory_.written_back();
  const core::Bytes room = sampler_.enabled() ? memory_.l2_room() : 0;
  if (device_.l2.count_final_writeback) memory_.flush(end);
  final_writeback_ = memory_.written_back() - written_back_in_launch;
  if (series_.samples().empty() || series_.samples().back().t < end) take_sample(end);

  core::KernelResult r;
  r.name = launch_.name();
  r.occupancy_limiter = scheduler_.occupancy().limiter;
  r.tensors = memory_.traffic();
  LaunchTotals t;
  t.stats = stats_;
  t.cycles = end;
  t.time_ns = device_.cycles_to_ns(end);
  t.dram_read = r.tensors.dram.total_read();
  t.dram_write = r.tensors.dram.total_write();
  t.memory = memory_.counters();
  for (const Sm& sm : sms_) {
    t.warps_integral += sm.warps_integral;
    t.active_cycles += sm.active_cycles;
  }
  t.max_warps_per_sm = device_.sm.max_warps_per_sm ? device_.sm.max_warps_per_sm : 1;
  t.occupancy = scheduler_.occupancy();
  t.busy = busy;
  t.threads_per_cta = shape_.threads_per_cta;
  t.regs_per_thread = shape_.regs_per_thread;
  t.smem_per_cta = shape_.smem_per_cta();
  t.ctas = scheduler_.num_ctas();
  t.waves = scheduler_.waves(static_cast<std::uint32_t>(sms_.size()));
  t.tail = last_wave_.tail(end);
  if (record_blocking_ && !blocking_done_.empty()) {
    // The timed loads are the last timed_loads blocking loads (e.g. pointer_chase's warm
    // traversal before them is not timed, as in the benchmark).
    const std::size_t n = blocking_done_.size();
    const std::size_t timed = std::min<std::size_t>(n, shape_.timed_loads);
    const double start = n > timed ? blocking_done_[n - timed - 1] : 0.0;
    t.cycles_per_load = (blocking_done_.back() - start) / static_cast<double>(timed);
  }
  if (sampler_.enabled()) {
    sampler_.finish(t, r.tensors, dram_read_factor);
    if (t.in_full_because.empty()) {
      // Skipped work took no channel or port time: the DRAM and L2 busy cycles follow from the
      // counted bytes, as a full run's from the bytes its channels and ports moved. DRAM: the
      // reads, and the writes but those of the final write-back (which a full run's busy cycles
      // leave out): the dirty lines the L2 holds at the end, and of the writes of CTAs skipped
      // whole (never in the L2) as many as its empty ways would have held.
      const core::Bytes counted = memory_.traffic().dram.total_write();  // without the sampler's extrapolation
      const core::Bytes skipped_writes = t.dram_write - std::min(t.dram_write, counted);
      final_writeback_ += std::min(skipped_writes, room);
      t.busy.dram = memory_.hbm().busy_cycles_for(t.dram_read, t.dram_write - std::min(t.dram_write, final_writeback_));
      t.busy.l2 = memory_.l2_busy_cycles_for(t.memory.l2_request_bytes);
    }
  }
  r.totals = t;  // sim/io names them (io::launch_metrics)
  r.series = series_.to_rates(device_);
  return r;
}

// The members defined here, for both memories (launch_simulator.cpp instantiates the others).
#define ATTNSIM_RESULT_MEMBERS(M)                                              \
  template void LaunchSimulator<M>::take_sample(double);                      \
  template void LaunchSimulator<M>::report_progress(double, bool) const;      \
  template BusyCycles LaunchSimulator<M>::busy_cycles() const;                \
  template core::KernelResult LaunchSimulator<M>::results(double);
ATTNSIM_RESULT_MEMBERS(MemorySystem)
ATTNSIM_RESULT_MEMBERS(ScratchpadMemory)
#undef ATTNSIM_RESULT_MEMBERS

}  // namespace attnsim::engine
