#include "sim/engine/launch_simulator.h"

#include <algorithm>
#include <sstream>
#include <string>

#include "sim/core/errors.h"

namespace attnsim::engine {

namespace {

core::Bytes l1_bytes(const core::DeviceSpec& d, const core::OccupancyResult& occ) {
  if (d.kind == core::DeviceKind::kScratchpad || !d.sm.l1_caches_global_loads) return 0;
  return d.sm.l1_shared_total_bytes > occ.carveout_bytes ? d.sm.l1_shared_total_bytes - occ.carveout_bytes : 0;
}

}  // namespace

template <class Memory>
LaunchSimulator<Memory>::LaunchSimulator(const core::DeviceSpec& device, const core::KernelLaunch& launch,
                                 const EngineOptions& options)
    : device_(device),
      launch_(launch),
      options_(options),
      shape_(launch.shape()),
      scheduler_(device, shape_),
      slots_per_sm_(scheduler_.slots_per_sm()),
      warps_per_cta_(shape_.warps_per_cta(device.sm.warp_size ? device.sm.warp_size : 32)),
      // Local memory is allocated per resident thread slot: slot k's CTAs all use the k-th copy.
      local_stride_((static_cast<core::Bytes>(shape_.stack_frame_bytes) * shape_.threads_per_cta + 127) / 128 * 128),
      memory_(device, l1_bytes(device, scheduler_.occupancy())),
      banks_(device.sm.shared_mem_banks, device.sm.shared_mem_bank_bytes),
      credits_(device, warps_per_cta_, slots_per_sm_, memory_.line_bytes(), memory_.unit_bytes(),
               memory_.granule_bytes(), memory_.block_model()),
      access_(memory_, queue_, credits_, device.kind == core::DeviceKind::kGpu && device.sm.l1_caches_global_loads),
      guard_(options.stall_limit_events),
      series_(options.sample_period_ns <= 0 ? 0.0 : options.sample_period_ns * device.clock_ghz) {
  sms_.assign(device.sm.count, Sm::from_spec(device));
  slots_.resize(static_cast<std::size_t>(device.sm.count) * slots_per_sm_);
  record_blocking_ = shape_.timed_loads > 0;
  if (options.sampled) init_sampler();
  queue_.reserve(slots_.size() * 4 + 16);
}

template <class Memory>
core::KernelResult LaunchSimulator<Memory>::run() {
  scheduler_.for_each_slot_in_wave_order(static_cast<std::uint32_t>(sms_.size()), [&](std::uint32_t slot, std::uint32_t sm) {
    slots_[slot].sm = sm;
    if (scheduler_.has_next()) dispatch(slot, 0);
  });
  if (scheduler_.num_ctas() > 0) queue_.push(series_.period(), EventKind::kSample, 0);
  const bool report = static_cast<bool>(options_.progress);
  std::uint64_t next_report = std::max<std::uint64_t>(1, options_.progress_every_events);
  while (!queue_.empty()) {
    const Event e = queue_.pop();
    ++stats_.events;
    check_progress(e.time);
    if (report && stats_.events >= next_report) {
      report_progress(e.time, false);
      next_report = stats_.events + std::max<std::uint64_t>(1, options_.progress_every_events);
    }
    switch (e.kind) {
      case EventKind::kResume:
        advance(e.slot, e.time);
        break;
      case EventKind::kCredit:
        return_credit(e.slot, e.bytes, e.time);
        break;
      case EventKind::kSample:
        take_sample(e.time);
        if (!scheduler_.done()) queue_.push(e.time + series_.period(), EventKind::kSample, 0);
        break;
    }
  }
  if (!scheduler_.done()) stall("no event left while CTAs are unfinished (deadlock)", end_time_);
  core::KernelResult r = results(end_time_);
  if (report) report_progress(end_time_, true);
  return r;
}

template <class Memory>
void LaunchSimulator<Memory>::dispatch(std::uint32_t slot, double now) {
  CtaSlot& s = slots_[slot];
  s.cta = scheduler_.take_next();
  s.active = true;
  s.ops.clear();
  s.pc = 0;
  s.step = 0;
  s.load_in_progress = false;
  s.waiting_credit = false;
  s.open_group = 0;
  s.group_head = s.group_count = 0;
  s.credit_balance = 0;
  s.balance_t = now;
  Sm& sm = sms_[s.sm];
  sm.set_warps(sm.warps + warps_per_cta_, now);
  if (sampler_.enabled() && sampled_dispatch(slot, now)) return;  // skipped whole: its slot is held
  queue_.push(now, EventKind::kResume, slot);
}

template <class Memory>
void LaunchSimulator<Memory>::retire(std::uint32_t slot, double now) {
  CtaSlot& s = slots_[slot];
  Sm& sm = sms_[s.sm];
  sm.set_warps(sm.warps - warps_per_cta_, now);
  s.active = false;
  if (sampler_.enabled()) sampler_.end_cta(slot, now);
  scheduler_.retire_one();
  end_time_ = std::max(end_time_, now);
  if (scheduler_.has_next()) dispatch(slot, now);
}

template <class Memory>
void LaunchSimulator<Memory>::stall(const std::string& why, double now) const {
  std::ostringstream os;
  os << "engine stalled in launch '" << launch_.name() << "': " << why << " for "
     << guard_.limit() << " events at cycle " << now << "; " << scheduler_.retired() << " of "
     << scheduler_.num_ctas() << " CTAs retired; queue holds " << queue_.size() << " events";
  for (const Event& e : queue_.head(4))
    os << "; [t=" << e.time << " kind=" << static_cast<int>(e.kind) << " slot=" << e.slot << "]";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < slots_.size() && shown < 4; ++i) {
    const CtaSlot& s = slots_[i];
    if (!s.active) continue;
    ++shown;
    os << "; slot " << i << ": CTA " << s.cta << " step " << s.step << " op " << s.pc << "/" << s.ops.size()
       << (s.waiting_credit ? " waiting for load credits" : "") << " groups in flight " << s.group_count;
  }
  throw core::SimError(os.str());
}

template <class Memory>
void LaunchSimulator<Memory>::return_credit(std::uint32_t slot, core::Bytes bytes, double now) {
  CtaSlot& s = slots_[slot];
  Sm& sm = sms_[s.sm];
  if (credits_.dither()) credits_.account(s, now);
  s.inflight -= bytes;
  sm.inflight -= bytes;
  if (s.waiting_credit && credits_.room(s, sm) >= s.credit_need) advance(slot, now);
  if (credits_.sm_limited() && sm.waiting > 0)  // another CTA on this SM may wait for the SM's allowance
    credits_.wake_waiting(sm, s.sm, slot, slots_.data(), [&](std::uint32_t k) { advance(k, now); });
}

template <class Memory>
void LaunchSimulator<Memory>::advance(std::uint32_t slot, double now) {
  CtaSlot& s = slots_[slot];
  Sm& sm = sms_[s.sm];
  if (sampler_.enabled() && sampler_.phantom(slot)) {
    retire(slot, now);
    return;
  }
  if (s.waiting_credit) {
    if (credits_.dither()) credits_.account(s, now);
    credits_.set_waiting(slot, s, sm, false);
  }
  for (;;) {
    check_progress(now);
    if (s.pc >= s.ops.size()) {
      s.ops.clear();
      s.pc = 0;
      if (!launch_.emit_step(s.cta, s.step, s.ops)) {
        if (sampler_.enabled() && sampled_sleep(slot, sampler_.finish_cta(slot, now), now)) return;
        retire(slot, now);
        return;
      }
      if (local_stride_ != 0)
        for (core::TileOp& o : s.ops)
          if (o.tensor == core::Tensor::kLocal) o.addr += static_cast<core::Bytes>(slot) * local_stride_;
      ++s.step;
      if (sampler_.enabled() && sampled_step(slot, s, now)) return;
      continue;
    }
    const double done = execute(slot, s, sm, s.ops[s.pc], now);
    if (done < 0) return;  // out of load credits: a kCredit event resumes us
    ++s.pc;
    if (sampler_.enabled()) sampler_.note_simulated_op();
    guard_.note_progress();
    if (done > now) {
      queue_.push(done, EventKind::kResume, slot);
      return;
    }
  }
}

// Runs op (s.ops[s.pc]) of the CTA in `slot` at `now`; returns when the CTA may go on, or -1
// when a load waits for credits.
template <class Memory>
double LaunchSimulator<Memory>::execute(std::uint32_t slot, CtaSlot& s, Sm& sm, const core::TileOp& op, double now) {
  double done = now;
  switch (op.kind) {
    case core::OpKind::kLoad: {
      if (!s.load_in_progress) {
        s.load_in_progress = true;
        s.load_row = 0;
        s.load_off = 0;
        s.load_done = now;
      }
      if (sampler_.enabled()) sampler_.before_access(memory_count());
      const bool issued = access_.load(slot, s, sm, now);
      if (sampler_.enabled()) sampler_.after_access(slot, op, memory_count(), issued);
      if (!issued) return -1;
      s.load_in_progress = false;
      stats_.lsu_bytes += static_cast<core::Bytes>(op.rows) * op.row_bytes;
      if (op.async) {
        s.open_group = std::max(s.open_group, s.load_done);
      } else {
        done = s.load_done;
        if (record_blocking_) blocking_done_.push_back(done);
      }
      break;
    }
    case core::OpKind::kStore:
      if (sampler_.enabled()) sampler_.before_access(memory_count());
      access_.store(s.sm, sm, op, now);
      if (sampler_.enabled()) sampler_.after_access(slot, op, memory_count(), true);
      stats_.lsu_bytes += static_cast<core::Bytes>(op.rows) * op.row_bytes;
      break;
    case core::OpKind::kSharedRead:
    case core::OpKind::kSharedWrite: {
      const BankCost c = banks_.cost(op);
      stats_.wavefronts += c.wavefronts;
      stats_.bank_conflicts += c.conflicts;
      auto& t = memory_.traffic().smem[op.tensor];
      (op.kind == core::OpKind::kSharedRead ? t.read : t.write) += op.bytes();
      done = sm.smem.serve(now, static_cast<double>(c.wavefronts)) +
             static_cast<double>(device_.sm.shared_mem_latency_cycles);
      break;
    }
    case core::OpKind::kMma: {
      const double flops = 2.0 * op.m * op.n * op.k;
      stats_.flops += flops;
      stats_.mma_flops += flops;
      done = sm.tensor.serve(now, flops);
      break;
    }
    case core::OpKind::kExp:
      stats_.flops += static_cast<double>(op.count);
      stats_.exp_ops += static_cast<double>(op.count);
      done = sm.sfu.serve(now, static_cast<double>(op.count));
      break;
    case core::OpKind::kElementwise:
      stats_.flops += static_cast<double>(op.count);
      stats_.fp32_ops += static_cast<double>(op.count);
      done = sm.fp32.serve(now, static_cast<double>(op.count));
      break;
    case core::OpKind::kIssue:
      stats_.issue_ops += static_cast<double>(op.count);
      done = sm.issue.serve(now, static_cast<double>(op.count));
      break;
    case core::OpKind::kBarrier:
      done = now + kBarrierCycles;
      break;
    case core::OpKind::kCommit:
      if (s.group_count == kMaxAsyncGroups)
        throw core::SimError("launch '" + launch_.name() + "': more than " + std::to_string(kMaxAsyncGroups) +
                             " committed async-copy groups in flight in CTA " + std::to_string(s.cta));
      s.groups[(s.group_head + s.group_count) % kMaxAsyncGroups] = s.open_group;
      ++s.group_count;
      if (sampler_.enabled() && s.open_group > 0) sampler_.note_group(slot, s.open_group - now);
      s.open_group = 0;
      break;
    case core::OpKind::kWait:
      while (s.group_count > op.count) {
        done = std::max(done, s.groups[s.group_head]);
        s.group_head = (s.group_head + 1) % kMaxAsyncGroups;
        --s.group_count;
      }
      break;
  }
  return done;
}

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
  b.tensor = pipe(stats_.mma_flops, sm.tensor_flops_per_cycle);
  b.fp32 = pipe(stats_.fp32_ops, sm.fp32_flops_per_cycle);
  b.sfu = pipe(stats_.exp_ops, sm.exp_per_cycle);
  b.issue = pipe(stats_.issue_ops, static_cast<double>(std::max(1u, sm.schedulers_per_sm)) * std::max(1u, sm.warp_size));
  return b;
}

template <class Memory>
core::KernelResult LaunchSimulator<Memory>::results(double end) {
  for (Sm& sm : sms_) sm.set_warps(sm.warps, end);
  if (sampler_.enabled()) add_skipped_stats();
  const BusyCycles busy = busy_cycles();
  // Dirty lines count as this launch's DRAM writes unless the device asks for Nsight Compute
  // accounting (l2.count_final_writeback: false), which stops counting when the kernel ends.
  if (device_.l2.count_final_writeback) memory_.flush(end);
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
  if (record_blocking_ && !blocking_done_.empty()) {
    // The timed loads are the last timed_loads blocking loads (e.g. pointer_chase's warm
    // traversal before them is not timed, as in the benchmark).
    const std::size_t n = blocking_done_.size();
    const std::size_t timed = std::min<std::size_t>(n, shape_.timed_loads);
    const double start = n > timed ? blocking_done_[n - timed - 1] : 0.0;
    t.cycles_per_load = (blocking_done_.back() - start) / static_cast<double>(timed);
  }
  if (sampler_.enabled()) sampler_.finish(t, r.tensors, busy.dram);
  r.totals = t;  // sim/io names them (io::launch_metrics)
  r.series = series_.to_rates(device_);
  return r;
}

template class LaunchSimulator<MemorySystem>;
template class LaunchSimulator<ScratchpadMemory>;

}  // namespace attnsim::engine
