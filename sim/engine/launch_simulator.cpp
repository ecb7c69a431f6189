// One launch's event loop: dispatch of CTAs and clusters, the warp groups' op streams, op timing.
#include "sim/engine/launch_simulator.h"

#include <array>
#include <algorithm>
#include <sstream>
#include <string>

#include "sim/core/errors.h"
#include "sim/engine/mma_timing.h"

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
               memory_.granule_bytes(), memory_.block_model(), shape_.inflight_bytes_per_warp),
      access_(memory_, queue_, credits_, device.kind == core::DeviceKind::kGpu && device.sm.l1_caches_global_loads,
              device.kind == core::DeviceKind::kGpu && device.sm.async_fills_take_banks ? banks_.wavefront_bytes() : 0),
      guard_(options.stall_limit_events),
      series_(options.sample_period_ns <= 0 ? 0.0 : options.sample_period_ns * device.clock_ghz) {
  sms_.assign(device.sm.count, Sm::from_spec(device));
  slots_.resize(static_cast<std::size_t>(device.sm.count) * slots_per_sm_);
  last_wave_ = LastWave(slots_.size());
  groups_ = launch.warp_groups();
  mbar_counts_ = launch.mbarriers();
  check_groups();
  const std::uint32_t warp = device.sm.warp_size ? device.sm.warp_size : 32;
  for (CtaSlot& s : slots_) {
    s.groups.resize(groups_.size());
    for (std::size_t g = 0; g < groups_.size(); ++g)
      s.groups[g].threads = groups_.size() == 1 ? shape_.threads_per_cta : groups_[g].warps * warp;
    s.mbarriers.resize(mbar_counts_.size());
  }
  record_blocking_ = shape_.timed_loads > 0;
  queue_copies_ = device.sm.queue_async_copies && credits_.limited();
  if (options.sampled) init_sampler();
  tracing_ = options.trace && !options.trace_ctas.empty();
  if (tracing_) trace_name_ = launch.name();
  queue_.reserve(slots_.size() * 4 + 16);
}

template <class Memory>
core::KernelResult LaunchSimulator<Memory>::run() {
  const bool clusters = scheduler_.cluster_size() > 1;
  scheduler_.for_each_slot_in_wave_order(static_cast<std::uint32_t>(sms_.size()), [&](std::uint32_t slot, std::uint32_t sm) {
    slots_[slot].sm = sm;
    if (clusters) scheduler_.free_slot(slot);
    else if (scheduler_.has_next()) dispatch(slot, 0);
  });
  if (clusters) place_clusters(0);
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
        advance(e.slot, static_cast<std::uint32_t>(e.bytes), e.time);
        break;
      case EventKind::kCredit:
        return_credit(e.slot, e.bytes, e.time);
        break;
      case EventKind::kSample:
        take_sample(e.time);
        if (scheduler_.done()) break;
        // Nothing left to wake a warp group: every one waits on a barrier no one will arrive at.
        if (queue_.empty()) stall("no event left while CTAs are unfinished (deadlock)", e.time);
        queue_.push(e.time + series_.period(), EventKind::kSample, 0);
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
  for (WarpGroup& g : s.groups) g.reset();
  s.groups_left = static_cast<std::uint32_t>(s.groups.size());
  s.credit_waiters = 0;
  s.copy_waiters = 0;
  for (std::size_t b = 0; b < s.mbarriers.size(); ++b) s.mbarriers[b].init(mbar_counts_[b]);
  s.named = {};
  s.waiting_credit = false;
  s.traced = tracing_ && std::binary_search(options_.trace_ctas.begin(), options_.trace_ctas.end(), s.cta);
  if (s.traced)
    for (WarpGroup& g : s.groups) g.op_start = now;  // its groups reach their first op (or skip) now
  s.credit_balance = 0;
  s.balance_t = now;
  Sm& sm = sms_[s.sm];
  sm.set_warps(sm.warps + warps_per_cta_, now);
  if (sampling_ && sampled_dispatch(slot, now)) return;  // skipped whole: its slot is held
  for (std::uint32_t g = 0; g < s.groups.size(); ++g) queue_.push(now, EventKind::kResume, slot, g);
}

// Places whole clusters on the free slots while the next one fits (cluster_size > 1).
template <class Memory>
void LaunchSimulator<Memory>::place_clusters(double now) {
  const std::uint32_t n = scheduler_.cluster_size();
  while (scheduler_.cluster_fits()) {
    std::array<std::uint32_t, CtaSlot::kMaxCluster> members{};
    for (std::uint32_t r = 0; r < n; ++r) members[r] = scheduler_.take_slot();
    for (std::uint32_t r = 0; r < n; ++r) {
      CtaSlot& s = slots_[members[r]];
      s.cluster_slots = members;
      dispatch(members[r], now);
      s.cluster_base = s.cta - r;
    }
  }
}

template <class Memory>
void LaunchSimulator<Memory>::retire(std::uint32_t slot, double now) {
  CtaSlot& s = slots_[slot];
  Sm& sm = sms_[s.sm];
  sm.set_warps(sm.warps - warps_per_cta_, now);
  s.active = false;
  if (sampling_) sampler_.end_cta(slot, now);
  scheduler_.retire_one();
  end_time_ = std::max(end_time_, now);
  last_wave_.retire(now);
  if (scheduler_.cluster_size() > 1) {
    scheduler_.free_slot(slot);
    place_clusters(now);
  } else if (scheduler_.has_next()) {
    dispatch(slot, now);
  }
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
    os << "; slot " << i << ": CTA " << s.cta << (s.waiting_credit ? " waiting for load credits" : "");
    for (std::size_t g = 0; g < s.groups.size(); ++g) {
      const WarpGroup& w = s.groups[g];
      os << (s.groups.size() > 1 ? " group " + std::to_string(g) + ":" : "") << " step " << w.step << " op " << w.pc
         << "/" << w.ops.size() << (w.finished ? " finished" : "") << " groups in flight " << w.copies.count()
         << (w.copies_queued() ? " copies queued " + std::to_string(w.queued.size() - w.queued_head) : "");
    }
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
  if (s.waiting_credit && credits_.room(s, sm) >= s.credit_need) resume_credit(slot, now);
  if (credits_.sm_limited() && sm.waiting > 0)  // another CTA on this SM may wait for the SM's allowance
    credits_.wake_waiting(sm, s.sm, slot, slots_.data(), [&](std::uint32_t k) { resume_credit(k, now); });
}

template <class Memory>
void LaunchSimulator<Memory>::resume_credit(std::uint32_t slot, double now) {
  CtaSlot& s = slots_[slot];
  if (credits_.dither()) credits_.account(s, now);
  credits_.set_waiting(slot, s, sms_[s.sm], false);
  for (std::uint32_t m = s.copy_waiters; m != 0; m &= m - 1) {  // queued copies first: in-order issue
    s.copy_waiters &= ~(m & (~m + 1));
    issue_copies(slot, static_cast<std::uint32_t>(__builtin_ctz(m)), now);
  }
  for (std::uint32_t m = s.credit_waiters; m != 0; m &= m - 1) {
    s.credit_waiters &= ~(m & (~m + 1));
    advance(slot, static_cast<std::uint32_t>(__builtin_ctz(m)), now);
  }
}

template <class Memory>
void LaunchSimulator<Memory>::advance(std::uint32_t slot, std::uint32_t gi, double now) {
  CtaSlot& s = slots_[slot];
  WarpGroup& g = s.groups[gi];
  Sm& sm = sms_[s.sm];
  if (sampling_ && sampler_.phantom(slot)) {
    if (s.traced) trace_skipped(s, gi, g, now, TraceRecord::Skipped::kCta);
    retire(slot, now);
    return;
  }
  for (;;) {
    check_progress(now);
    if (g.pc >= g.ops.size()) {
      g.ops.clear();
      g.pc = 0;
      if (!launch_.emit_group_step(s.cta, gi, g.step, g.ops)) {
        if (g.copies_queued()) {  // the group ends once its queued copies are issued
          g.wait_copies = true;
          return;
        }
        g.finished = true;
        if (sample_steps_ && sampled_sleep(slot, sampler_.finish_cta(slot, now), now)) return;
        if (--s.groups_left == 0) retire(slot, now);
        return;
      }
      if (local_stride_ != 0)
        for (core::TileOp& o : g.ops)
          if (o.tensor == core::Tensor::kLocal) o.addr += static_cast<core::Bytes>(slot) * local_stride_;
      ++g.step;
      if (s.traced && g.op_start < 0) g.op_start = now;  // the step starts (or is skipped) now
      if (sample_steps_ && sampled_step(slot, g, now)) return;
      continue;
    }
    if (s.traced && g.op_start < 0) g.op_start = now;
    const double done = execute(slot, s, gi, g, sm, g.ops[g.pc], now);
    if (done < 0) return;  // blocked: out of load credits, or in a barrier; resumed by its release
    if (s.traced) trace_op(s, gi, g, done);
    ++g.pc;
    if (sampling_) sampler_.note_simulated_op();
    guard_.note_progress();
    if (done > now) {
      queue_.push(done, EventKind::kResume, slot, gi);
      return;
    }
  }
}

// Runs op (g.ops[g.pc]) of warp group gi of the CTA in `slot` at `now`; returns when the group
// may go on, or -1 when it blocks (a load waiting for credits, a barrier).
template <class Memory>
double LaunchSimulator<Memory>::execute(std::uint32_t slot, CtaSlot& s, std::uint32_t gi, WarpGroup& g, Sm& sm,
                                        const core::TileOp& op, double now) {
  double done = now;
  switch (op.kind) {
    case core::OpKind::kLoad: {
      if (queue_copies_ && op.async && !op.bulk) {  // cp.async, sm.queue_async_copies: queued, the group goes on
        stats_.lsu_bytes += static_cast<core::Bytes>(op.rows) * op.row_bytes;
        deliver_fills(s, op, now);
        queue_copy(slot, gi, g, op, now);
        break;
      }
      if (!op.bulk && g.copies_queued()) {  // a blocking load waits behind the group's queued copies
        g.wait_copies = true;
        return -1;
      }
      if (!g.load_in_progress) {
        g.load_in_progress = true;
        g.load = {0, 0, now};
      }
      if (sampling_) sampler_.before_access(memory_.counters(), memory_.traffic(), op.tensor);
      const bool issued = access_.load(slot, s, op, g.load, sm, now);
      if (sampling_) sampler_.after_access(slot, op, memory_.counters(), memory_.traffic(), issued);
      if (!issued) {
        s.credit_waiters |= 1u << gi;
        return -1;
      }
      g.load_in_progress = false;
      stats_.lsu_bytes += static_cast<core::Bytes>(op.rows) * op.row_bytes;
      if (op.async) deliver_fills(s, op, now);
      if (op.bulk && op.barrier != core::kNoBarrier) {
        complete_tx(s, op, g.load.done);  // TMA: the bytes complete_tx on the mbarrier(s)
      } else if (op.async) {
        g.open_group = std::max(g.open_group, g.load.done);
      } else {
        done = g.load.done;
        if (record_blocking_) blocking_done_.push_back(done);
      }
      break;
    }
    case core::OpKind::kStore:
      if (sampling_) sampler_.before_access(memory_.counters(), memory_.traffic(), op.tensor);
      access_.store(s.sm, sm, op, now);
      if (sampling_) sampler_.after_access(slot, op, memory_.counters(), memory_.traffic(), true);
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
      if (op.async) {  // fragments loaded ahead (ldmatrix before mma.sync): the next MMA waits for them
        g.smem_ready = std::max(g.smem_ready, done);
        done = now;
      }
      break;
    }
    case core::OpKind::kMma: {
      const double flops = 2.0 * op.m * op.n * op.k;
      stats_.flops += flops;
      stats_.mma_flops += flops;
      const double ready = std::max(time_mma(sm, device_.sm, op, shape_.mma_dtype, now), g.smem_ready);
      g.smem_ready = 0;
      if (op.async) g.open_mma = std::max(g.open_mma, ready);  // wgmma: ordered by kMmaCommit / kMmaWait
      else done = ready;
      break;
    }
    // Instructions: each takes its pipe (MUFU or FP32) and one issue slot per thread.
    case core::OpKind::kExp:
      stats_.flops += static_cast<double>(op.count);
      stats_.exp_ops += static_cast<double>(op.count);
      done = std::max(sm.sfu.serve(now, static_cast<double>(op.count)), sm.issue.serve(now, static_cast<double>(op.count)));
      // sm.sfu_holds_tensor: the tensor pipe is not free while the SFU serves these (in FIFO
      // order with the MMAs queued there).
      if (device_.sm.sfu_holds_tensor && device_.sm.exp_per_cycle > 0)  // 0: an unlimited SFU holds nothing
        done = std::max(done, sm.tensor.hold(now, static_cast<double>(op.count) / device_.sm.exp_per_cycle));
      break;
    case core::OpKind::kElementwise:
      stats_.flops += static_cast<double>(op.count);
      stats_.fp32_ops += static_cast<double>(op.count);
      done = std::max(sm.fp32.serve(now, static_cast<double>(op.count)), sm.issue.serve(now, static_cast<double>(op.count)));
      if (device_.sm.fp32_holds_tensor && device_.sm.fp32_flops_per_cycle > 0)  // sm.fp32_holds_tensor: as the SFU's
        done = std::max(done, sm.tensor.hold(now, 2.0 * static_cast<double>(op.count) / device_.sm.fp32_flops_per_cycle));
      break;
    case core::OpKind::kIssue:
      stats_.issue_ops += static_cast<double>(op.count);
      // op.m: the fewest cycles the op takes (a warp's dependent instruction chain through it).
      done = std::max(sm.issue.serve(now, static_cast<double>(op.count)), now + static_cast<double>(op.m));
      break;
    case core::OpKind::kBarrier:  // __syncthreads: bar.sync 0 over the whole CTA
      done = s.groups.size() == 1 ? now + kBarrierCycles : named_sync(slot, s, gi, 0, 0, true, now);
      break;
    case core::OpKind::kCommit:
    case core::OpKind::kMmaCommit: {
      const bool mma = op.kind == core::OpKind::kMmaCommit;
      AsyncGroups& groups = mma ? g.mmas : g.copies;
      if (groups.full())
        throw core::SimError("launch '" + launch_.name() + "': more than " + std::to_string(kMaxAsyncGroups) +
                             " committed async " + (mma ? "MMA" : "copy") + " groups in flight in CTA " +
                             std::to_string(s.cta));
      double& open = mma ? g.open_mma : g.open_group;
      if (sample_steps_ && !mma && open > 0) sampler_.note_group(slot, open - now);
      groups.commit(open);
      open = 0;
      break;
    }
    case core::OpKind::kWait:
      if (g.copies_queued() && g.queued[g.queued_head].group < g.copies.kept_after(op.count)) {
        g.wait_copies = true;  // a group it waits for still has copies to issue
        return -1;
      }
      done = g.copies.wait(op.count, now);
      break;
    case core::OpKind::kMmaWait:
      done = g.mmas.wait(op.count, now);
      break;
    case core::OpKind::kMbarArrive:
      mbar_arrive(s, op, now);
      break;
    case core::OpKind::kMbarWait:
      done = mbar_wait(slot, s, gi, op, now);
      break;
    case core::OpKind::kNamedSync:
    case core::OpKind::kNamedArrive:
      done = named_sync(slot, s, gi, op.barrier, op.count, op.kind == core::OpKind::kNamedSync, now);
      break;
  }
  return done;
}

template class LaunchSimulator<MemorySystem>;
template class LaunchSimulator<ScratchpadMemory>;

}  // namespace attnsim::engine
