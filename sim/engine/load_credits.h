// Load credits: the bytes of global loads a CTA (warps x max_inflight_bytes_per_warp, or x the
// launch's own smaller LaunchShape::inflight_bytes_per_warp) and an SM (max_inflight_bytes_per_sm)
// may hold in flight, so that achieved bandwidth is in-flight bytes / latency (Little's law).
// Credits come back per chunk (a quarter of the smallest allowance) by one kCredit event; a CTA
// out of credits resumes only once kResumeLines lines of room are free again, so returned
// credits coalesce instead of fragmenting into one-line chunks. In the block
// model with a CTA allowance a CTA may overdraw it while its credit balance is positive
// (account(): sigma-delta, so its bytes in flight average the allowance). Scratchpad devices
// have no allowance (their DMA engines bound the rate).
#pragma once

#include <cstdint>
#include <limits>

#include "sim/core/device_spec.h"
#include "sim/engine/cta_slot.h"
#include "sim/engine/sm.h"

namespace attnsim::engine {

class LoadCredits {
 public:
  static constexpr core::Bytes kResumeLines = 3;  // credit room a waiting CTA resumes at

  // `line`, `unit`, `granule`: the memory system's line, access unit and DRAM request bytes;
  // `kernel_per_warp`: the launch's own per-warp allowance (LaunchShape), where smaller.
  LoadCredits(const core::DeviceSpec& device, std::uint32_t warps_per_cta, std::uint32_t slots_per_sm,
              core::Bytes line, core::Bytes unit, core::Bytes granule, bool block_model, core::Bytes kernel_per_warp = 0);

  bool limited() const { return cta_credit_ || sm_credit_; }
  bool sm_limited() const { return sm_credit_ != 0; }
  core::Bytes cta_allowance() const { return cta_credit_; }  // 0 = unlimited
  core::Bytes chunk_bytes() const { return chunk_bytes_; }
  core::Bytes resume_bytes() const { return resume_bytes_; }
  // Block model with a CTA allowance: whole pieces, credit_balance.
  bool dither() const { return dither_; }
  std::uint32_t credit_group() const { return credit_group_; }  // dither(): DRAM requests per line-model chunk

  // The SM's allowance left.
  core::Bytes sm_room(const Sm& sm) const {
    return sm_credit_ ? (sm_credit_ > sm.inflight ? sm_credit_ - sm.inflight : 0)
                      : std::numeric_limits<core::Bytes>::max();
  }
  // min(CTA, SM) allowance left.
  core::Bytes room(const CtaSlot& s, const Sm& sm) const {
    const core::Bytes cta = cta_credit_ ? (cta_credit_ > s.inflight ? cta_credit_ - s.inflight : 0)
                                        : std::numeric_limits<core::Bytes>::max();
    return std::min(cta, sm_room(sm));
  }
  // Block model: brings s.credit_balance up to `now`.
  void account(CtaSlot& s, double now) const {
    const double cta = static_cast<double>(cta_credit_);
    const double held = static_cast<double>(s.inflight);
    if (s.waiting_credit || held > cta) s.credit_balance += (cta - held) * (now - s.balance_t);
    s.balance_t = now;
  }
  // Sets slot `slot` (= s, on SM sm) waiting for load credits or not, with the SM's count and mask.
  void set_waiting(std::uint32_t slot, CtaSlot& s, Sm& sm, bool on) const {
    s.waiting_credit = on;
    if (on) ++sm.waiting;
    else --sm.waiting;
    if (slots_per_sm_ > 64) return;
    const std::uint64_t bit = std::uint64_t{1} << (slot - s.sm * slots_per_sm_);
    sm.waiting_mask = on ? sm.waiting_mask | bit : sm.waiting_mask & ~bit;
  }
  // Calls wake(k) for every slot k of SM `sm` (slots[k] its state) other than `except` that waits
  // for credits and has the room it waits for, in slot order.
  template <class Wake>
  void wake_waiting(const Sm& sm, std::uint32_t sm_index, std::uint32_t except, CtaSlot* slots, Wake&& wake) const {
    const std::uint32_t base = sm_index * slots_per_sm_;
    if (slots_per_sm_ <= 64) {  // visit only the waiting slots, in slot order
      for (std::uint64_t m = sm.waiting_mask & ~(std::uint64_t{1} << (except - base)); m != 0; m &= m - 1) {
        const std::uint32_t k = static_cast<std::uint32_t>(__builtin_ctzll(m));
        CtaSlot& o = slots[base + k];
        if (o.waiting_credit && room(o, sm) >= o.credit_need) wake(base + k);
      }
    } else {
      for (std::uint32_t k = 0; k < slots_per_sm_; ++k) {
        CtaSlot& o = slots[base + k];
        if (o.waiting_credit && base + k != except && room(o, sm) >= o.credit_need) wake(base + k);
      }
    }
  }

 private:
  std::uint32_t slots_per_sm_ = 1;
  core::Bytes cta_credit_ = 0;  // 0 = unlimited
  core::Bytes sm_credit_ = 0;   // 0 = unlimited
  core::Bytes chunk_bytes_ = 0;
  core::Bytes resume_bytes_ = 0;  // room a CTA out of credits waits for (kResumeLines lines)
  bool dither_ = false;
  std::uint32_t credit_group_ = 0;
};

}  // namespace attnsim::engine
