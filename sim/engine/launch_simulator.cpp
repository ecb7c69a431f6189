#include "sim/engine/launch_simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "sim/core/errors.h"

namespace attnsim::engine {

namespace {

constexpr std::size_t kMaxSamples = 512;  // auto period: the period doubles past this

core::OccupancyResult place(const core::DeviceSpec& d, const core::LaunchShape& shape) {
  if (d.kind == core::DeviceKind::kScratchpad) {
    const core::Bytes smem = shape.smem_per_cta();
    const core::Bytes sram = d.scratchpad.sram_bytes_per_core;
    if (smem > sram)
      throw core::ConfigError(core::ConfigProblem{
          d.source_file, 0, "smem_per_cta",
          "a program instance needs " + std::to_string(smem) + " bytes of SRAM but a core of '" + d.name +
              "' has " + std::to_string(sram)});
    core::OccupancyResult r;
    r.active_blocks = smem ? static_cast<std::uint32_t>(std::max<core::Bytes>(1, sram / smem)) : 1;
    r.active_blocks = std::min(r.active_blocks, std::max<std::uint32_t>(1, d.sm.max_blocks_per_sm));
    r.limit_blocks = r.limit_shared_mem = r.active_blocks;
    r.limit_registers = r.limit_warps = r.active_blocks;
    r.active_warps = r.active_blocks * shape.warps_per_cta(d.sm.warp_size);
    r.max_warps_pct = d.sm.max_warps_per_sm ? 100.0 * r.active_warps / d.sm.max_warps_per_sm : 0;
    r.limiter = "shared_mem";
    return r;
  }
  core::OccupancyInput in;
  in.threads_per_block = shape.threads_per_cta;
  in.regs_per_thread = shape.regs_per_thread;
  in.smem_per_block = shape.smem_per_cta();
  core::OccupancyResult r = core::compute_occupancy(d.sm, in);
  if (r.active_blocks == 0)
    throw core::ConfigError(core::ConfigProblem{d.source_file, 0, "launch", "no CTA of this launch fits on an SM"});
  return r;
}

core::Bytes l1_bytes(const core::DeviceSpec& d, const core::OccupancyResult& occ) {
  if (d.kind == core::DeviceKind::kScratchpad || !d.sm.l1_caches_global_loads) return 0;
  return d.sm.l1_shared_total_bytes > occ.carveout_bytes ? d.sm.l1_shared_total_bytes - occ.carveout_bytes : 0;
}

}  // namespace

LaunchSimulator::LaunchSimulator(const core::DeviceSpec& device, const core::KernelLaunch& launch,
                                 const core::Workload& workload, const EngineOptions& options)
    : device_(device),
      launch_(launch),
      workload_(workload),
      options_(options),
      shape_(launch.shape()),
      occupancy_(place(device, shape_)),
      memory_(device, l1_bytes(device, occupancy_)),
      banks_(device.sm.shared_mem_banks, device.sm.shared_mem_bank_bytes) {
  slots_per_sm_ = occupancy_.active_blocks;
  // Local memory is allocated per resident thread slot: slot k's CTAs all use the k-th copy.
  local_stride_ = (static_cast<core::Bytes>(shape_.stack_frame_bytes) * shape_.threads_per_cta + 127) / 128 * 128;
  warps_per_cta_ = shape_.warps_per_cta(device.sm.warp_size ? device.sm.warp_size : 32);
  const core::Bytes line = memory_.line_bytes();
  if (device.kind == core::DeviceKind::kGpu) {
    if (device.sm.max_inflight_bytes_per_warp)
      cta_credit_ = std::max<core::Bytes>(line, device.sm.max_inflight_bytes_per_warp * warps_per_cta_);
    if (device.sm.max_inflight_bytes_per_sm)
      sm_credit_ = std::max<core::Bytes>(line, device.sm.max_inflight_bytes_per_sm);
  }
  const core::Bytes smallest = cta_credit_ && sm_credit_ ? std::min(cta_credit_, sm_credit_)
                                                         : std::max(cta_credit_, sm_credit_);
  dither_ = memory_.block_model() && cta_credit_ > 0;
  if (dither_) {  // the line model's credit chunk, in DRAM requests
    const core::Bytes line_chunk = std::max<core::Bytes>(line, smallest / 4);
    const core::Bytes granule = std::max<core::Bytes>(1, memory_.granule_bytes());
    credit_group_ = static_cast<std::uint32_t>((line_chunk + granule - 1) / granule);
  }
  // Block model: credits come back per tracking unit at least (fewer events).
  const core::Bytes grain = std::max<core::Bytes>(line, memory_.unit_bytes());
  chunk_bytes_ = smallest ? std::max<core::Bytes>(grain, smallest / 4) : std::numeric_limits<core::Bytes>::max();
  // A CTA out of credits resumes once kResumeLines lines of room are back (credit_need), so
  // that returned credits coalesce instead of fragmenting into one-line chunks. Never more than
  // the smallest allowance (which is at least a line).
  resume_bytes_ = smallest ? std::min(std::max<core::Bytes>(line, smallest / 4), kResumeLines * line)
                           : std::numeric_limits<core::Bytes>::max();
  l1_for_sync_loads_ = device.kind == core::DeviceKind::kGpu && device.sm.l1_caches_global_loads;

  const double clock = device.clock_ghz;
  Sm proto;
  proto.lsu = BandwidthServer(device.sm.load_bytes_per_cycle > 0 ? device.sm.load_bytes_per_cycle : 1e30);
  proto.tensor = BandwidthServer(device.sm.tensor_flops_per_cycle > 0 ? device.sm.tensor_flops_per_cycle : 1e30);
  proto.fp32 = BandwidthServer(device.sm.fp32_flops_per_cycle > 0 ? device.sm.fp32_flops_per_cycle : 1e30);
  proto.sfu = BandwidthServer(device.sm.exp_per_cycle > 0 ? device.sm.exp_per_cycle : 1e30);
  proto.smem = BandwidthServer(1.0);  // one wavefront per cycle
  // One warp instruction per scheduler per cycle, counted in thread instructions.
  proto.issue = BandwidthServer(static_cast<double>(std::max(1u, device.sm.schedulers_per_sm)) *
                                std::max(1u, device.sm.warp_size));
  sms_.assign(device.sm.count, proto);
  slots_.resize(static_cast<std::size_t>(device.sm.count) * slots_per_sm_);
  num_ctas_ = shape_.num_ctas();
  record_blocking_ = workload.kernel == "pointer_chase";
  auto_period_ = options.sample_period_ns <= 0;
  sample_period_ = auto_period_ ? 64.0 : options.sample_period_ns * clock;
  queue_.reserve(slots_.size() * 4 + 16);
}

void LaunchSimulator::set_warps(Sm& sm, std::uint32_t warps, double now) {
  const double dt = now - sm.last_change;
  sm.warps_integral += sm.warps * dt;
  if (sm.warps > 0) sm.active_cycles += dt;
  sm.last_change = now;
  sm.warps = warps;
}

void LaunchSimulator::dispatch(std::uint32_t slot, double now) {
  Slot& s = slots_[slot];
  s.cta = next_cta_++;
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
  set_warps(sm, sm.warps + warps_per_cta_, now);
  queue_.push(now, EventKind::kResume, slot);
}

void LaunchSimulator::retire(std::uint32_t slot, double now) {
  Slot& s = slots_[slot];
  Sm& sm = sms_[s.sm];
  set_warps(sm, sm.warps - warps_per_cta_, now);
  s.active = false;
  ++retired_ctas_;
  end_time_ = std::max(end_time_, now);
  if (next_cta_ < num_ctas_) dispatch(slot, now);
}

void LaunchSimulator::note_progress() { since_progress_ = 0; }

void LaunchSimulator::check_progress(double now) {
  if (now != last_time_) {
    last_time_ = now;
    since_time_moved_ = 0;
  } else if (++since_time_moved_ > options_.stall_limit_events) {
    stall("simulated time stopped advancing", now);
  }
  if (++since_progress_ > options_.stall_limit_events) stall("no tile operation retired", now);
}

void LaunchSimulator::stall(const std::string& why, double now) const {
  std::ostringstream os;
  os << "engine stalled in launch '" << launch_.name() << "': " << why << " for "
     << options_.stall_limit_events << " events at cycle " << now << "; " << retired_ctas_ << " of "
     << num_ctas_ << " CTAs retired; queue holds " << queue_.size() << " events";
  for (const Event& e : queue_.head(4))
    os << "; [t=" << e.time << " kind=" << static_cast<int>(e.kind) << " slot=" << e.slot << "]";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < slots_.size() && shown < 4; ++i) {
    const Slot& s = slots_[i];
    if (!s.active) continue;
    ++shown;
    os << "; slot " << i << ": CTA " << s.cta << " step " << s.step << " op " << s.pc << "/" << s.ops.size()
       << (s.waiting_credit ? " waiting for load credits" : "") << " groups in flight " << s.group_count;
  }
  throw core::SimError(os.str());
}

void LaunchSimulator::return_credit(std::uint32_t slot, core::Bytes bytes, double now) {
  Slot& s = slots_[slot];
  Sm& sm = sms_[s.sm];
  if (dither_) account(s, now);
  s.inflight -= bytes;
  sm.inflight -= bytes;
  if (s.waiting_credit && credit_room(s, sm) >= s.credit_need) advance(slot, now);
  if (sm_credit_ && sm.waiting > 0) {  // another CTA on this SM may wait for the SM's allowance
    const std::uint32_t base = s.sm * slots_per_sm_;
    if (slots_per_sm_ <= 64) {  // visit only the waiting slots, in slot order
      for (std::uint64_t m = sm.waiting_mask & ~(std::uint64_t{1} << (slot - base)); m != 0; m &= m - 1) {
        const std::uint32_t k = static_cast<std::uint32_t>(__builtin_ctzll(m));
        Slot& o = slots_[base + k];
        if (o.waiting_credit && credit_room(o, sm) >= o.credit_need) advance(base + k, now);
      }
    } else {
      for (std::uint32_t k = 0; k < slots_per_sm_; ++k) {
        Slot& o = slots_[base + k];
        if (o.waiting_credit && base + k != slot && credit_room(o, sm) >= o.credit_need) advance(base + k, now);
      }
    }
  }
}

void LaunchSimulator::account(Slot& s, double now) const {
  const double cta = static_cast<double>(cta_credit_);
  const double held = static_cast<double>(s.inflight);
  if (s.waiting_credit || held > cta) s.credit_balance += (cta - held) * (now - s.balance_t);
  s.balance_t = now;
}

core::Bytes LaunchSimulator::sm_room(const Sm& sm) const {
  return sm_credit_ ? (sm_credit_ > sm.inflight ? sm_credit_ - sm.inflight : 0) : std::numeric_limits<core::Bytes>::max();
}

core::Bytes LaunchSimulator::credit_room(const Slot& s, const Sm& sm) const {
  const core::Bytes cta = cta_credit_ ? (cta_credit_ > s.inflight ? cta_credit_ - s.inflight : 0)
                                      : std::numeric_limits<core::Bytes>::max();
  return std::min(cta, sm_room(sm));
}

bool LaunchSimulator::issue_load(std::uint32_t slot, double now) {
  return memory_.block_model() ? issue_load_model<true>(slot, now) : issue_load_model<false>(slot, now);
}

template <bool block>
bool LaunchSimulator::issue_load_model(std::uint32_t slot, double now) {
  Slot& s = slots_[slot];
  const core::TileOp& op = s.ops[s.pc];
  Sm& sm = sms_[s.sm];
  const core::Bytes unit = memory_.unit_bytes();
  const core::Bytes line = memory_.line_bytes();
  const bool dither = block && dither_;
  const bool limited = (cta_credit_ || sm_credit_) && !op.bulk;
  const bool via_l1 = l1_for_sync_loads_ && !op.async;
  // Block model: a tile whose rows are contiguous is one long row, so requests span rows.
  const bool merge = block && op.row_stride == op.row_bytes;
  const std::uint32_t rows = merge ? 1 : op.rows;
  const core::Bytes row_bytes = merge ? op.row_bytes * op.rows : op.row_bytes;
  if (dither) account(s, now);
  core::Bytes chunk = 0;
  double chunk_done = now;
  core::Bytes line_room = block || !limited ? 0 : credit_room(s, sm);
  const std::uint32_t rows_ahead =
      rows > 1 ? static_cast<std::uint32_t>((8 * unit + row_bytes - 1) / std::max<core::Bytes>(1, row_bytes)) : 1;
  while (s.load_row < rows) {
    const core::Bytes a = op.addr + static_cast<core::Bytes>(s.load_row) * op.row_stride + s.load_off;
    core::Bytes piece = std::min<core::Bytes>(memory_.unit_rest(a), row_bytes - s.load_off);
    if (limited) {
      // Line model: nothing returns credits inside this loop and a piece is issued only when it
      // fits, so the room is the loop's first credit_room() less what it issued since.
      const core::Bytes room = block ? credit_room(s, sm) : line_room;
      if (room < piece) {
        if constexpr (!block) break;
        const bool last = s.load_row + 1 == rows && s.load_off + piece == row_bytes;
        if (dither && !last && sm_room(sm) >= piece && piece <= cta_credit_ && room > 0) {
          // Block model, short of the CTA's own allowance: a unit's piece is issued whole (one
          // L2 access, one credit chunk) or not at all. The CTA overdraws its allowance (by
          // piece - room, until credits come back) while credit_balance, the integral of
          // allowance minus bytes in flight over the time it has been held back by credits,
          // is positive, and waits otherwise; so its bytes in flight average the allowance, as
          // the line model's do (sigma-delta). It never overdraws an allowance used up, nor
          // the SM's.
          if (s.credit_balance <= 0) break;
        } else {
          // The last piece of the load (whose issue lets the CTA go on), a piece larger than
          // the allowance, or short of the SM's allowance: as many whole lines as there is
          // room for, as in the line model.
          const core::Bytes end = (a + room) / line * line;
          if (end <= a) break;
          piece = end - a;
        }
      }
      s.inflight += piece;
      sm.inflight += piece;
      chunk += piece;
      if constexpr (!block) line_room -= piece;
    }
    // Host prefetch of the L2 tag sets 8 units ahead in this op's address sequence: further
    // along the row, or in a later row when rows are shorter than that.
    constexpr core::Bytes kAhead = 8;
    if (row_bytes - s.load_off > kAhead * unit) {
      memory_.prefetch(s.sm, a + kAhead * unit);
    } else if (s.load_row + rows_ahead < rows) {
      memory_.prefetch(s.sm, a + static_cast<core::Bytes>(rows_ahead) * op.row_stride);
    }
    const double issue = sm.lsu.serve(now, static_cast<double>(piece));
    double done;
    if (dither) {
      // Block model: a unit's credits come back when its lines' would in the line model, which
      // returns them in chunks of allowance / 4, each when its last line is back.
      double credit_at = 0;
      done = memory_.read_credit(issue, s.sm, a, static_cast<std::uint32_t>(piece), op.tensor, via_l1,
                                 credit_group_, credit_at);
      chunk_done = std::max(chunk_done, credit_at);
    } else {
      done = memory_.read(issue, s.sm, a, static_cast<std::uint32_t>(piece), op.tensor, via_l1);
      chunk_done = std::max(chunk_done, done);
    }
    s.load_done = std::max(s.load_done, done);
    s.load_off += piece;
    if (s.load_off >= row_bytes) {
      s.load_off = 0;
      ++s.load_row;
    }
    if (chunk >= chunk_bytes_) {
      queue_.push(chunk_done, EventKind::kCredit, slot, chunk);
      chunk = 0;
      chunk_done = now;
    }
  }
  if (chunk > 0) queue_.push(chunk_done, EventKind::kCredit, slot, chunk);
  if (s.load_row < rows) {
    // Resume when kResumeLines lines of room are back (or the rest of the load, if less), so
    // that returned credits coalesce instead of splitting into ever smaller chunks. Each term
    // is at least the piece that did not fit and at most the smallest allowance, all of which
    // comes back once this SM's loads in flight complete: the CTA always resumes.
    const core::Bytes left = static_cast<core::Bytes>(rows - s.load_row) * row_bytes - s.load_off;
    s.credit_need = std::min(resume_bytes_, left);
    set_waiting(slot, s, sm, true);
    return false;
  }
  return true;
}

void LaunchSimulator::issue_store(Slot& s, const core::TileOp& op, double now) {
  Sm& sm = sms_[s.sm];
  const bool merge = memory_.block_model() && op.row_stride == op.row_bytes;
  const std::uint32_t rows = merge ? 1 : op.rows;
  const core::Bytes row_bytes = merge ? op.row_bytes * op.rows : op.row_bytes;
  for (std::uint32_t r = 0; r < rows; ++r) {
    core::Bytes off = 0;
    while (off < row_bytes) {
      const core::Bytes a = op.addr + static_cast<core::Bytes>(r) * op.row_stride + off;
      const core::Bytes piece = std::min<core::Bytes>(memory_.unit_rest(a), row_bytes - off);
      const double issue = sm.lsu.serve(now, static_cast<double>(piece));
      memory_.write(issue, s.sm, a, static_cast<std::uint32_t>(piece), op.tensor);
      off += piece;
    }
  }
}

void LaunchSimulator::advance(std::uint32_t slot, double now) {
  Slot& s = slots_[slot];
  Sm& sm = sms_[s.sm];
  if (s.waiting_credit) {
    if (dither_) account(s, now);
    set_waiting(slot, s, sm, false);
  }
  for (;;) {
    check_progress(now);
    if (s.pc >= s.ops.size()) {
      s.ops.clear();
      s.pc = 0;
      if (!launch_.emit_step(s.cta, s.step, s.ops)) {
        retire(slot, now);
        return;
      }
      if (local_stride_ != 0)
        for (core::TileOp& o : s.ops)
          if (o.tensor == core::Tensor::kLocal) o.addr += static_cast<core::Bytes>(slot) * local_stride_;
      ++s.step;
      continue;
    }
    const core::TileOp& op = s.ops[s.pc];
    double done = now;
    switch (op.kind) {
      case core::OpKind::kLoad: {
        if (!s.load_in_progress) {
          s.load_in_progress = true;
          s.load_row = 0;
          s.load_off = 0;
          s.load_done = now;
        }
        if (!issue_load(slot, now)) return;  // out of credits: a kCredit event resumes us
        s.load_in_progress = false;
        lsu_bytes_ += static_cast<core::Bytes>(op.rows) * op.row_bytes;
        if (op.async) {
          s.open_group = std::max(s.open_group, s.load_done);
        } else {
          done = s.load_done;
          if (record_blocking_) blocking_done_.push_back(done);
        }
        break;
      }
      case core::OpKind::kStore:
        issue_store(s, op, now);
        lsu_bytes_ += static_cast<core::Bytes>(op.rows) * op.row_bytes;
        break;
      case core::OpKind::kSharedRead:
      case core::OpKind::kSharedWrite: {
        const BankCost c = banks_.cost(op);
        wavefronts_ += c.wavefronts;
        bank_conflicts_ += c.conflicts;
        auto& t = memory_.traffic().smem[op.tensor];
        (op.kind == core::OpKind::kSharedRead ? t.read : t.write) += op.bytes();
        done = sm.smem.serve(now, static_cast<double>(c.wavefronts)) +
               static_cast<double>(device_.sm.shared_mem_latency_cycles);
        break;
      }
      case core::OpKind::kMma: {
        const double flops = 2.0 * op.m * op.n * op.k;
        flops_ += flops;
        mma_flops_ += flops;
        done = sm.tensor.serve(now, flops);
        break;
      }
      case core::OpKind::kExp:
        flops_ += static_cast<double>(op.count);
        exp_ops_ += static_cast<double>(op.count);
        done = sm.sfu.serve(now, static_cast<double>(op.count));
        break;
      case core::OpKind::kElementwise:
        flops_ += static_cast<double>(op.count);
        fp32_ops_ += static_cast<double>(op.count);
        done = sm.fp32.serve(now, static_cast<double>(op.count));
        break;
      case core::OpKind::kIssue:
        issue_ops_ += static_cast<double>(op.count);
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
    ++s.pc;
    note_progress();
    if (done > now) {
      queue_.push(done, EventKind::kResume, slot);
      return;
    }
  }
}

void LaunchSimulator::take_sample(double now) {
  Sample x;
  x.t = now;
  x.dram_bytes = static_cast<double>(memory_.hbm().bytes_read() + memory_.hbm().bytes_written());
  x.lts_bytes = static_cast<double>(memory_.counters().lts_bytes);
  std::uint64_t warps = 0;
  for (const Sm& sm : sms_) warps += sm.warps;
  const double peak = static_cast<double>(device_.sm.max_warps_per_sm) * static_cast<double>(sms_.size());
  x.warps_pct = peak > 0 ? 100.0 * static_cast<double>(warps) / peak : 0;
  samples_.push_back(x);
  if (auto_period_ && samples_.size() > kMaxSamples) {
    std::vector<Sample> merged;
    merged.reserve(samples_.size() / 2 + 1);
    for (std::size_t i = 1; i < samples_.size(); i += 2) {
      Sample m = samples_[i];
      m.warps_pct = 0.5 * (samples_[i - 1].warps_pct + samples_[i].warps_pct);
      merged.push_back(m);
    }
    samples_.swap(merged);
    sample_period_ *= 2;
  }
}

core::KernelResult LaunchSimulator::run() {
  // Initial wave: CTA i on SM i mod count, filling each SM's slots round by round.
  for (std::uint32_t k = 0; k < slots_per_sm_; ++k)
    for (std::uint32_t m = 0; m < sms_.size(); ++m) {
      const std::uint32_t slot = m * slots_per_sm_ + k;
      slots_[slot].sm = m;
      if (next_cta_ < num_ctas_) dispatch(slot, 0);
    }
  if (num_ctas_ > 0) queue_.push(sample_period_, EventKind::kSample, 0);
  const bool report = static_cast<bool>(options_.progress);
  std::uint64_t next_report = std::max<std::uint64_t>(1, options_.progress_every_events);
  while (!queue_.empty()) {
    const Event e = queue_.pop();
    ++events_;
    check_progress(e.time);
    if (report && events_ >= next_report) {
      report_progress(e.time, false);
      next_report = events_ + std::max<std::uint64_t>(1, options_.progress_every_events);
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
        if (retired_ctas_ < num_ctas_) queue_.push(e.time + sample_period_, EventKind::kSample, 0);
        break;
    }
  }
  if (retired_ctas_ < num_ctas_) stall("no event left while CTAs are unfinished (deadlock)", end_time_);
  core::KernelResult r = results(end_time_);
  if (report) report_progress(end_time_, true);
  return r;
}

void LaunchSimulator::report_progress(double now, bool done) const {
  const std::string name = launch_.name();  // outlives the call
  LaunchProgress p;
  p.name = name;
  p.ctas_retired = retired_ctas_;
  p.ctas = num_ctas_;
  p.events = events_;
  p.cycles = now;
  p.done = done;
  options_.progress(p);
}

core::KernelResult LaunchSimulator::results(double end) {
  for (Sm& sm : sms_) set_warps(sm, sm.warps, end);
  // Busy cycles of each resource up to `end` (before the final write-back below, which does not
  // extend the launch), summed over its instances: the inputs of attnsim__bound (core/derived_metrics.h).
  // The SM pipes' busy cycles are the units they served (counted per op) over their rates.
  const double dram_busy = memory_.hbm().busy_cycles();
  auto pipe = [](double units, double per_cycle) { return per_cycle > 0 ? units / per_cycle : 0.0; };
  const double lsu_busy = pipe(static_cast<double>(lsu_bytes_), device_.sm.load_bytes_per_cycle);
  const double smem_busy = static_cast<double>(wavefronts_);  // one wavefront per cycle
  const double tensor_busy = pipe(mma_flops_, device_.sm.tensor_flops_per_cycle);
  const double fp32_busy = pipe(fp32_ops_, device_.sm.fp32_flops_per_cycle);
  const double sfu_busy = pipe(exp_ops_, device_.sm.exp_per_cycle);
  const double issue_busy =
      pipe(issue_ops_, static_cast<double>(std::max(1u, device_.sm.schedulers_per_sm)) * std::max(1u, device_.sm.warp_size));
  // Dirty lines count as this launch's DRAM writes unless the device asks for Nsight Compute
  // accounting (l2.count_final_writeback: false), which stops counting when the kernel ends.
  if (device_.l2.count_final_writeback) memory_.flush(end);
  if (samples_.empty() || samples_.back().t < end) take_sample(end);

  core::KernelResult r;
  r.name = launch_.name();
  r.occupancy_limiter = occupancy_.limiter;
  r.tensors = memory_.traffic();
  const double clock = device_.clock_ghz;
  const double time_ns = device_.cycles_to_ns(end);
  const core::Bytes dram_read = r.tensors.dram.total_read();
  const core::Bytes dram_write = r.tensors.dram.total_write();
  const MemoryCounters& c = memory_.counters();
  double warps_integral = 0, active = 0;
  for (const Sm& sm : sms_) {
    warps_integral += sm.warps_integral;
    active += sm.active_cycles;
  }
  const double max_warps = device_.sm.max_warps_per_sm ? device_.sm.max_warps_per_sm : 1;
  auto& m = r.metrics;
  core::set_metric(m, "dram__bytes_read.sum", static_cast<double>(dram_read));
  core::set_metric(m, "dram__bytes_write.sum", static_cast<double>(dram_write));
  core::set_metric(m, "lts__t_bytes.sum", static_cast<double>(c.lts_bytes));
  core::set_metric(m, "lts__t_sector_hit_rate.pct",
                   c.lts_sectors ? 100.0 * static_cast<double>(c.lts_hit_sectors) / static_cast<double>(c.lts_sectors) : 0);
  core::set_metric(m, "gpu__time_duration.sum", time_ns);
  core::set_metric(m, "sm__warps_active.avg.pct_of_peak_sustained_active",
                   active > 0 ? 100.0 * warps_integral / (active * max_warps) : 0);
  core::set_metric(m, "sm__maximum_warps_per_active_cycle_pct", occupancy_.max_warps_pct);
  core::set_metric(m, "launch__occupancy_limit_blocks", occupancy_.limit_blocks);
  core::set_metric(m, "launch__occupancy_limit_registers", occupancy_.limit_registers);
  core::set_metric(m, "launch__occupancy_limit_shared_mem", occupancy_.limit_shared_mem);
  core::set_metric(m, "launch__occupancy_limit_warps", occupancy_.limit_warps);
  core::set_metric(m, "launch__grid_size", static_cast<double>(num_ctas_));
  core::set_metric(m, "launch__block_size", shape_.threads_per_cta);
  core::set_metric(m, "launch__registers_per_thread", shape_.regs_per_thread);
  core::set_metric(m, "launch__shared_mem_per_block", static_cast<double>(shape_.smem_per_cta()));
  core::set_metric(m, "launch__waves_per_multiprocessor",
                   static_cast<double>(num_ctas_) / (static_cast<double>(slots_per_sm_) * static_cast<double>(sms_.size())));
  core::set_metric(m, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", static_cast<double>(bank_conflicts_));
  core::set_metric(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", static_cast<double>(wavefronts_));
  core::set_metric(m, "dram__bytes.sum.per_second",
                   time_ns > 0 ? static_cast<double>(dram_read + dram_write) / (time_ns * 1e-9) : 0);
  core::set_metric(m, "attnsim__events", static_cast<double>(events_));
  core::set_metric(m, "attnsim__cycles", end);
  core::set_metric(m, "attnsim__flops", flops_);
  core::set_metric(m, "attnsim__l2_near_hits", static_cast<double>(c.l2_near_hits));
  core::set_metric(m, "attnsim__l2_far_hits", static_cast<double>(c.l2_far_hits));
  core::set_metric(m, "attnsim__l2_misses", static_cast<double>(c.l2_misses));
  core::set_metric(m, "attnsim__l2_request_bytes", static_cast<double>(c.l2_request_bytes));
  core::set_metric(m, "attnsim__l1_hits", static_cast<double>(c.l1_hits));
  core::set_metric(m, "attnsim__dram_busy_cycles", dram_busy);
  core::set_metric(m, "attnsim__l2_busy_cycles", memory_.l2_busy_cycles());
  core::set_metric(m, "attnsim__dma_busy_cycles", memory_.dma_busy_cycles());
  core::set_metric(m, "attnsim__lsu_busy_cycles", lsu_busy);
  core::set_metric(m, "attnsim__smem_busy_cycles", smem_busy);
  core::set_metric(m, "attnsim__tensor_busy_cycles", tensor_busy);
  core::set_metric(m, "attnsim__fp32_busy_cycles", fp32_busy);
  core::set_metric(m, "attnsim__sfu_busy_cycles", sfu_busy);
  core::set_metric(m, "attnsim__issue_busy_cycles", issue_busy);
  if (record_blocking_ && !blocking_done_.empty()) {
    // pointer_chase: the timed loads are the last `loads` blocking loads (the warm traversal
    // before them is not timed, as in the benchmark).
    const std::size_t n = blocking_done_.size();
    const std::size_t timed = std::min<std::size_t>(n, workload_.loads ? workload_.loads : n);
    const double start = n > timed ? blocking_done_[n - timed - 1] : 0.0;
    core::set_metric(m, "attnsim__cycles_per_load", (blocking_done_.back() - start) / static_cast<double>(timed));
  }

  r.series.period_ns = device_.cycles_to_ns(sample_period_);
  r.series.names = {"time_ns", "dram_gbps", "lts_gbps", "active_warps_pct"};
  r.series.columns.assign(4, {});
  double prev_t = 0, prev_dram = 0, prev_lts = 0;
  for (const Sample& x : samples_) {
    const double dt = x.t - prev_t;
    r.series.columns[0].push_back(device_.cycles_to_ns(x.t));
    r.series.columns[1].push_back(dt > 0 ? (x.dram_bytes - prev_dram) / dt * clock : 0);
    r.series.columns[2].push_back(dt > 0 ? (x.lts_bytes - prev_lts) / dt * clock : 0);
    r.series.columns[3].push_back(x.warps_pct);
    prev_t = x.t;
    prev_dram = x.dram_bytes;
    prev_lts = x.lts_bytes;
  }
  return r;
}

}  // namespace attnsim::engine
