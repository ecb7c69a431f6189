#include "sim/engine/memory_system.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace attnsim::engine {

namespace {
core::L2Spec l2_spec_of(const core::DeviceSpec& d) {
  core::L2Spec s = d.l2;
  if (s.capacity_bytes == 0) s.partitions = 1;
  return s;
}

core::Bytes unit_of_spec(const core::DeviceSpec& d) {
  const core::Bytes line = d.l2.line_bytes ? d.l2.line_bytes : 128;
  // The block model applies to the L2; with the L2 off every access is exact anyway.
  return d.l2.capacity_bytes > 0 && d.l2.tracking_bytes > line ? d.l2.tracking_bytes : line;
}
}  // namespace

MemorySystem::MemorySystem(const core::DeviceSpec& device, core::Bytes l1_bytes_per_sm)
    : device_(device),
      sm_count_(std::max<std::uint32_t>(1, device.sm.count)),
      l2_enabled_(device.l2.capacity_bytes > 0),
      line_bytes_(device.l2.line_bytes ? device.l2.line_bytes : 128),
      sector_bytes_(device.l2.sector_bytes ? device.l2.sector_bytes : 32),
      unit_bytes_(unit_of_spec(device)),
      granule_bytes_(std::min(unit_bytes_, std::max(line_bytes_, device.hbm.interleave_bytes))),
      hbm_(device.hbm, device.clock_ghz),
      l2_(l2_spec_of(device), unit_bytes_),
      near_latency_(static_cast<double>(device.l2.near_hit_latency_cycles)),
      far_latency_(static_cast<double>(device.l2.far_hit_latency_cycles)),
      l1_latency_(static_cast<double>(device.sm.l1_hit_latency_cycles)) {
  if (l2_enabled_ && device.l2.wait_for_pending_fills) pending_.resize(kPendingFills);
  const std::uint32_t parts = l2_.partitions();
  const double l2_bpc = device.gbps_to_bytes_per_cycle(device.l2.bandwidth_gbps) / parts;
  l2_ports_.assign(parts, BandwidthServer(l2_bpc));
  l2_bytes_per_cycle_ = l2_bpc * parts;
  // With the L2 off every global access reaches HBM: the L1 is bypassed too.
  const bool l1_on = l2_enabled_ && device.sm.l1_caches_global_loads && l1_bytes_per_sm > 0;
  l1_.assign(device.sm.count,
             l1_on ? L1Cache(l1_bytes_per_sm, unit_bytes_, static_cast<std::uint32_t>(unit_bytes_ / sector_bytes_))
                     : L1Cache());
  unit_shift_ = std::has_single_bit(unit_bytes_) ? std::countr_zero(unit_bytes_) : -1;
  sector_shift_ = std::has_single_bit(sector_bytes_) ? std::countr_zero(sector_bytes_) : -1;
  near_.resize(sm_count_);
  for (std::uint32_t sm = 0; sm < sm_count_; ++sm)
    near_[sm] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(sm) * parts / sm_count_);
}

double MemorySystem::dram_transfer(double t, std::uint64_t unit, std::uint64_t mask, bool write, std::uint32_t group,
                                   double* credit_at, double spacing) {
  const core::Bytes base = unit * unit_bytes_;
  if (unit_bytes_ == granule_bytes_) {
    const core::Bytes bytes = static_cast<core::Bytes>(sector_count(mask)) * sector_bytes_;
    const double done = write ? hbm_.write(t, base, bytes) : hbm_.read(t, base, bytes);
    if (credit_at) *credit_at = done;
    return done;
  }
  const std::uint32_t per = static_cast<std::uint32_t>(granule_bytes_ / sector_bytes_);  // sectors per granule
  return hbm_.transfer(t, base, mask, per, granule_bytes_, sector_bytes_, write, group, credit_at, spacing);
}

core::Bytes MemorySystem::count_writeback(const Victim& v) {
  // Set sampling (warm_stride_ > 1): only the sampled sets see the warmed loads' evictions, so
  // the write-backs are theirs, each standing for warm_stride_ (the others' are not counted).
  std::uint32_t weight = 1;
  if (warm_stride_ > 1) [[unlikely]]
    weight = l2_.in_sampled_set(v.line, warm_stride_) ? warm_stride_ : 0;
  const core::Bytes bytes = static_cast<core::Bytes>(sector_count(v.dirty_mask)) * sector_bytes_ * weight;
  const auto t = static_cast<core::Tensor>(v.tensor);
  if (!writes_when_stored_ || core::stored_repeatedly(t)) traffic_.dram[t].write += bytes;  // else counted when stored
  written_back_ += bytes;
  counters_.l2_writebacks += weight;
  return bytes;
}

double MemorySystem::write_back_dirty(double t, const Victim& v) {
  count_writeback(v);
  return dram_transfer(t, v.line, v.dirty_mask, true);
}

template <bool kCredit>
double MemorySystem::read_impl(double t, std::uint32_t sm, core::Bytes addr, std::uint32_t bytes,
                               core::Tensor tensor, bool via_l1, std::uint32_t credit_group, double* credit_at,
                               double spread) {
  auto back = [credit_at](double done) {  // every byte back at once
    if constexpr (kCredit) *credit_at = done;
    return done;
  };
  const std::uint64_t unit = unit_of(addr);
  L1Cache& l1 = l1_[sm];
  if (via_l1 && l1.enabled()) {
    traffic_.l1[tensor].read += bytes;
    if (l1.load(unit, block_model() ? sector_mask(addr - unit * unit_bytes_, bytes) : 0)) {
      ++counters_.l1_hits;
      return back(t + l1_latency_);
    }
    ++counters_.l1_misses;
  }
  if (!l2_enabled_) {  // no L2: the exact bytes go to HBM
    traffic_.lts[tensor].read += bytes;
    traffic_.dram[tensor].read += bytes;
    counters_.lts_bytes += bytes;
    return back(hbm_.read(t, addr, bytes));
  }
  const L2Request r = l2_request(t, sm, addr, bytes, tensor, false);
  const L2Outcome& o = r.outcome;
  const double at_l2 = r.at_l2;
  if (warm_stride_ > 1 && !warmed_reads_[static_cast<std::size_t>(tensor)]) [[unlikely]] {  // correct_timed_misses
    TimedReads& x = timed_reads_[static_cast<std::size_t>(tensor)];
    const int sampled = l2_.in_sampled_set(unit, warm_stride_) ? 1 : 0;
    ++x.lines[sampled];
    if (o.where == L2Where::kMiss) {
      ++x.missed[sampled];
      x.miss_bytes[sampled] += static_cast<core::Bytes>(o.miss_sectors) * sector_bytes_;
    }
  }
  switch (o.where) {
    case L2Where::kNearHit:
      ++counters_.l2_near_hits;
      return back(after_fill(unit, at_l2 + near_latency_));
    case L2Where::kFarHit:
      ++counters_.l2_far_hits;
      return back(after_fill(unit, at_l2 + far_latency_));
    case L2Where::kMiss:
      break;
  }
  ++counters_.l2_misses;
  const core::Bytes miss_bytes = static_cast<core::Bytes>(o.miss_sectors) * sector_bytes_;
  traffic_.dram[tensor].read += miss_bytes;
  if (!kCredit || spread <= 0)
    return note_fill(unit, dram_transfer(at_l2, unit, o.missing, false, credit_group, credit_at));
  // The granules first..last of the unit that [addr, addr + bytes) spans left the SM one after
  // another over `spread`, the last at t: their DRAM requests leave as evenly, the last one at
  // at_l2, granule g of the unit at t0 + g x spacing. (A hit's bytes come back at once.)
  const core::Bytes off = addr - unit * unit_bytes_;
  const core::Bytes first = off / granule_bytes_, last = (off + bytes - 1) / granule_bytes_;
  const double spacing = spread / static_cast<double>(last - first + 1);
  return note_fill(unit, dram_transfer(at_l2 - static_cast<double>(last) * spacing, unit, o.missing, false,
                                      credit_group, credit_at, spacing));
}

double MemorySystem::write(double t, std::uint32_t sm, core::Bytes addr, std::uint32_t bytes,
                           core::Tensor tensor) {
  if (!l2_enabled_) {  // no L2: the exact bytes go to HBM
    traffic_.lts[tensor].write += bytes;
    traffic_.dram[tensor].write += bytes;
    counters_.lts_bytes += bytes;
    return hbm_.write(t, addr, bytes);
  }
  count_stored(addr, bytes, tensor);
  return l2_request(t, sm, addr, bytes, tensor, true).at_l2;
}

inline MemorySystem::L2Request MemorySystem::l2_request(double t, std::uint32_t sm, core::Bytes addr,
                                                        std::uint32_t bytes, core::Tensor tensor, bool write) {
  const std::uint64_t unit = unit_of(addr);
  const core::Bytes off = addr - unit * unit_bytes_;
  const std::uint64_t mask = sector_mask(off, bytes);
  const std::uint32_t sectors = sector_count(mask);
  const std::uint32_t near = near_partition(sm);
  const L2Outcome o = l2_.access(unit, mask, write, near, static_cast<std::uint8_t>(tensor));
  const core::Bytes sector_total = count_l2(o, sectors, near, tensor, write);
  auto amount = static_cast<double>(sector_total);
  if (l2_background_on_) [[unlikely]] amount *= l2_background_.factor(t);  // sampled: skipped steps' bytes
  const double at_l2 = l2_ports_[o.partition].serve(t, amount);
  write_back(at_l2, o.writeback[0]);
  write_back(at_l2, o.writeback[1]);
  return {o, at_l2};
}

inline core::Bytes MemorySystem::count_l2(const L2Outcome& o, std::uint32_t sectors, std::uint32_t near,
                                          core::Tensor tensor, bool write) {
  const core::Bytes sector_total = static_cast<core::Bytes>(sectors) * sector_bytes_;
  // A request that its SM's near partition does not serve (a read that misses the near copy, a
  // store to a line homed in the far partition) passes two tag stages: the near partition's,
  // then, over the partitions' fabric, the home partition's. Nsight Compute's lts__t_* count
  // both lookups. Only the counts: the far hit latency already holds the extra hop, and the L2
  // bandwidth is charged once, to the partition that serves the data.
  const std::uint32_t stages = o.partition != near ? 2 : 1;
  counters_.lts_sectors += static_cast<std::uint64_t>(sectors) * stages;
  // Nsight Compute counts every store sector as a hit ("all stores are considered hits; only
  // loads cause misses"): a store does not wait for the line, whether or not it was present.
  // A read's near-stage lookup is a miss; its home-stage lookup hits where the home line has it.
  counters_.lts_hit_sectors += write ? static_cast<std::uint64_t>(sectors) * stages : o.hit_sectors;
  counters_.lts_bytes += sector_total * stages;
  counters_.l2_request_bytes += sector_total;
  (write ? traffic_.lts[tensor].write : traffic_.lts[tensor].read) += sector_total * stages;
  return sector_total;
}

std::array<double, core::kNumTensors> MemorySystem::correct_timed_misses() {
  std::array<double, core::kNumTensors> factor;
  factor.fill(1.0);
  if (warm_stride_ <= 1) return factor;
  for (std::size_t i = 0; i < core::kNumTensors; ++i) {
    const TimedReads& x = timed_reads_[i];
    const double n0 = static_cast<double>(x.lines[0]), n1 = static_cast<double>(x.lines[1]);
    if (warmed_reads_[i] || n0 == 0 || n1 == 0 || x.missed[1] == 0) continue;
    const double p0 = static_cast<double>(x.missed[0]) / n0, p1 = static_cast<double>(x.missed[1]) / n1;
    const double p = static_cast<double>(x.missed[0] + x.missed[1]) / (n0 + n1);
    const double se = std::sqrt(p * (1 - p) * (1 / n0 + 1 / n1));
    if (!(se > 0 && p1 - p0 >= kTimedMissZ * se)) continue;
    const double lines = (p1 - p0) * n0;  // misses the other sets' timed reads left out
    const double per_line = static_cast<double>(x.miss_bytes[1]) / static_cast<double>(x.missed[1]);
    const auto bytes = static_cast<std::uint64_t>(std::llround(lines * per_line));
    const auto missed = static_cast<std::uint64_t>(std::llround(lines));
    const auto tensor = static_cast<core::Tensor>(i);
    const double counted = static_cast<double>(x.miss_bytes[0] + x.miss_bytes[1]);
    if (counted > 0) factor[i] = (counted + static_cast<double>(bytes)) / counted;
    traffic_.dram[tensor].read += bytes;
    counters_.l2_misses += missed;
    // The hits they were counted as, near and far in the launch's proportion.
    const double hits = static_cast<double>(counters_.l2_near_hits + counters_.l2_far_hits);
    const double near_share = hits > 0 ? static_cast<double>(counters_.l2_near_hits) / hits : 1.0;
    const std::uint64_t from_near = std::min(
        counters_.l2_near_hits, static_cast<std::uint64_t>(std::llround(static_cast<double>(missed) * near_share)));
    counters_.l2_near_hits -= from_near;
    counters_.l2_far_hits -= std::min(counters_.l2_far_hits, missed - from_near);
    counters_.lts_hit_sectors -= std::min(counters_.lts_hit_sectors, bytes / sector_bytes_);
  }
  return factor;
}

void MemorySystem::warm(std::uint32_t sm, core::Bytes addr, std::uint32_t bytes, core::Tensor tensor, bool write,
                        bool via_l1) {
  // The counts of read_impl / write and the L1 and L2 state they leave, without any timing.
  if (!write) warmed_reads_[static_cast<std::size_t>(tensor)] = true;  // correct_timed_misses
  if (!l2_enabled_) {  // every byte, exactly (the closed forms)
    (write ? traffic_.lts[tensor].write : traffic_.lts[tensor].read) += bytes;
    (write ? traffic_.dram[tensor].write : traffic_.dram[tensor].read) += bytes;
    counters_.lts_bytes += bytes;
    untimed_dram_ += bytes;
    return;
  }
  const std::uint64_t unit = unit_of(addr);
  const std::uint64_t mask = sector_mask(addr - unit * unit_bytes_, bytes);
  if (!write && via_l1 && l1_[sm].enabled()) {
    traffic_.l1[tensor].read += bytes;
    if (l1_[sm].load(unit, block_model() ? mask : 0)) {
      ++counters_.l1_hits;
      return;
    }
    ++counters_.l1_misses;
  }
  if (write) count_stored(addr, bytes, tensor);
  const std::uint32_t near = near_partition(sm);
  const L2Outcome o = l2_.access(unit, mask, write, near, static_cast<std::uint8_t>(tensor));
  count_l2(o, sector_count(mask), near, tensor, write);
  for (const Victim& v : o.writeback)
    if (v.valid && v.dirty_mask != 0) untimed_dram_ += count_writeback(v);
  if (write) return;
  switch (o.where) {
    case L2Where::kNearHit:
      ++counters_.l2_near_hits;
      return;
    case L2Where::kFarHit:
      ++counters_.l2_far_hits;
      return;
    case L2Where::kMiss:
      break;
  }
  ++counters_.l2_misses;
  const core::Bytes miss_bytes = static_cast<core::Bytes>(o.miss_sectors) * sector_bytes_;
  traffic_.dram[tensor].read += miss_bytes;
  untimed_dram_ += miss_bytes;
}

std::uint32_t MemorySystem::set_warm_stride(std::uint32_t stride) {
  const std::uint32_t sets = l2_.sets();
  warm_stride_ = 1;
  // At least kMinWarmSets sets sampled: the counts of the skipped steps are a ratio estimate over
  // them, and a small L2 sampled at the full stride leaves too few (the teaching preset's 128 sets:
  // 8 at stride 16, DRAM reads of flash1 B2 H4 seq_q 100 seq_kv 4096 -3.4 % against full).
  while (l2_enabled_ && sets / (warm_stride_ * 2) >= kMinWarmSets && warm_stride_ * 2 <= stride &&
         sets % (warm_stride_ * 2) == 0)
    warm_stride_ *= 2;
  return warm_stride_;
}

MemorySystem::WarmMark MemorySystem::warm_mark(core::Tensor tensor) const {
  return {counters_, traffic_.lts[tensor].read, traffic_.dram[tensor].read, traffic_.l1[tensor].read, untimed_dram_};
}

void MemorySystem::enable_background(bool l2) {
  if (!l2_enabled_) return;
  hbm_.enable_background();
  if (!l2) return;
  l2_background_ = FluidLoad(l2_bytes_per_cycle_);
  l2_background_on_ = l2_background_.enabled();
}

double MemorySystem::occupy(double t, double duration, const WarmMark& m) {
  if (!l2_enabled_) return t;
  const double dram = hbm_.add_background(t, duration, untimed_dram_ - m.untimed);
  const auto l2 = static_cast<double>(counters_.l2_request_bytes - m.c.l2_request_bytes);
  double queued = 0;  // timed work still queued at the ports, at the rate it takes alone (Hbm::add_background)
  for (const BandwidthServer& p : l2_ports_) queued += std::max(0.0, p.free_at() - t);
  queued /= static_cast<double>(l2_ports_.size()) * l2_background_.factor(t);  // before this step's fluid joins
  return std::max(dram, l2_background_.add(t, duration, l2) + queued);
}

double MemorySystem::occupy_dram(double t, double duration, double read, double written) {
  if (!l2_enabled_) return t;
  const double bytes = read + written * hbm_.write_weight();
  return std::max(hbm_.add_background(t, duration, static_cast<core::Bytes>(bytes)), hbm_.add_backlog(t, bytes));
}

void MemorySystem::warm_scale(const WarmMark& m, core::Tensor tensor, double f) {
  // What the warmed pieces added since `m`, times f - 1, rounded once per counter. The
  // write-backs are left alone: each is one dirty line (stores are warmed whole).
  auto add = [f](std::uint64_t& now, std::uint64_t before) {
    now += static_cast<std::uint64_t>(std::llround(static_cast<double>(now - before) * (f - 1.0)));
  };
  MemoryCounters& c = counters_;
  add(c.lts_sectors, m.c.lts_sectors);
  add(c.lts_hit_sectors, m.c.lts_hit_sectors);
  add(c.lts_bytes, m.c.lts_bytes);
  add(c.l2_request_bytes, m.c.l2_request_bytes);
  add(c.l1_hits, m.c.l1_hits);
  add(c.l1_misses, m.c.l1_misses);
  add(c.l2_near_hits, m.c.l2_near_hits);
  add(c.l2_far_hits, m.c.l2_far_hits);
  add(c.l2_misses, m.c.l2_misses);
  add(traffic_.lts[tensor].read, m.lts);
  add(traffic_.l1[tensor].read, m.l1);
  const core::Bytes dram = traffic_.dram[tensor].read;
  add(traffic_.dram[tensor].read, m.dram);
  untimed_dram_ += traffic_.dram[tensor].read - dram;
}

double MemorySystem::l2_busy_cycles_for(std::uint64_t request_bytes) const {
  // Every L2 request occupies its partition's port for its sector bytes at the per-partition rate
  // (l2_request), and l2_request_bytes sums those bytes.
  if (l2_ports_.empty() || !l2_enabled_) return 0;
  const double per_port = device_.gbps_to_bytes_per_cycle(device_.l2.bandwidth_gbps) / l2_.partitions();
  return per_port > 0 ? static_cast<double>(request_bytes) / per_port : 0;
}

double MemorySystem::flush(double t) {
  if (!l2_enabled_) return t;
  double done = t;
  l2_.flush([&](std::uint64_t unit, std::uint64_t dirty, std::uint8_t tensor) {
    Victim v;
    v.valid = true;
    v.line = unit;
    v.dirty_mask = dirty;
    v.tensor = tensor;
    done = std::max(done, write_back(t, v));
  });
  return done;
}

template double MemorySystem::read_impl<false>(double, std::uint32_t, core::Bytes, std::uint32_t, core::Tensor, bool,
                                               std::uint32_t, double*, double);
template double MemorySystem::read_impl<true>(double, std::uint32_t, core::Bytes, std::uint32_t, core::Tensor, bool,
                                              std::uint32_t, double*, double);

}  // namespace attnsim::engine
