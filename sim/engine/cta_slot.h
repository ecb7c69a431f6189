// A resident CTA slot of an SM: the CTA running in it, its op stream and program counter, the
// progress of its current global load, its async-copy groups and the load bytes it holds in
// flight. One op stream per CTA (the CTA executes its tile ops in order).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/tile_op.h"
#include "sim/core/types.h"

namespace attnsim::engine {

struct CtaSlot {
  static constexpr std::uint32_t kMaxAsyncGroups = 64;  // committed, not yet waited-for groups

  std::uint64_t cta = 0;
  std::uint32_t sm = 0;
  bool active = false;
  bool waiting_credit = false;
  bool load_in_progress = false;
  std::vector<core::TileOp> ops;
  std::size_t pc = 0;
  std::uint64_t step = 0;
  std::uint32_t load_row = 0;
  core::Bytes load_off = 0;
  double load_done = 0;
  double open_group = 0;
  std::array<double, kMaxAsyncGroups> groups{};
  std::uint32_t group_head = 0, group_count = 0;
  // Async MMAs (wgmma issued with TileOp::async): the completion time of each, oldest first
  // (a ring of kMaxAsyncGroups); a kWait with `async` waits on these instead of the copy groups.
  std::array<double, kMaxAsyncGroups> mma_groups{};
  std::uint32_t mma_head = 0, mma_count = 0;
  core::Bytes inflight = 0;
  core::Bytes credit_need = 0;  // waiting_credit: room needed before the CTA resumes
  // Block model: the running integral, in byte-cycles, of the CTA allowance minus the bytes
  // in flight over the time the CTA waits for credits or holds more than its allowance;
  // balance_t: when it was last brought up to date (LoadCredits::account).
  double credit_balance = 0;
  double balance_t = 0;
};

}  // namespace attnsim::engine
