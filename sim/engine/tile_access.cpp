// Issue of tile loads and stores in the line and block L2 models.
#include "sim/engine/tile_access.h"

#include <algorithm>

namespace attnsim::engine {

template <class Memory>
template <class Policy>
bool TileAccess<Memory>::load_as(std::uint32_t slot, CtaSlot& s, const core::TileOp& op, LoadCursor& at, Sm& sm,
                                 double now) {
  constexpr bool block = Policy::kBlock;
  const core::Bytes unit = memory_.unit_bytes();
  const core::Bytes line = memory_.line_bytes();
  const bool dither = block && credits_.dither();
  const bool limited = credits_.limited() && !op.bulk;
  const bool via_l1 = l1_for_sync_loads_ && !op.async;
  // Block model: a tile whose rows are contiguous is one long row, so requests span rows.
  const bool merge = block && op.row_stride == op.row_bytes;
  const std::uint32_t rows = merge ? 1 : op.rows;
  const core::Bytes row_bytes = merge ? op.row_bytes * op.rows : op.row_bytes;
  if (dither) credits_.account(s, now);
  core::Bytes chunk = 0;
  double chunk_done = now;
  core::Bytes line_room = block || !limited ? 0 : credits_.room(s, sm);
  const std::uint32_t rows_ahead =
      rows > 1 ? static_cast<std::uint32_t>((8 * unit + row_bytes - 1) / std::max<core::Bytes>(1, row_bytes)) : 1;
  const core::Bytes issued_from = static_cast<core::Bytes>(at.row) * row_bytes + at.off;
  while (at.row < rows) {
    const core::Bytes a = op.addr + static_cast<core::Bytes>(at.row) * op.row_stride + at.off;
    core::Bytes piece = std::min<core::Bytes>(memory_.unit_rest(a), row_bytes - at.off);
    if (limited) {
      // Line model: nothing returns credits inside this loop and a piece is issued only when it
      // fits, so the room is the loop's first room() less what it issued since.
      const core::Bytes room = block ? credits_.room(s, sm) : line_room;
      if (room < piece) {
        if constexpr (!block) break;
        const bool last = at.row + 1 == rows && at.off + piece == row_bytes;
        if (dither && !last && credits_.sm_room(sm) >= piece && piece <= credits_.cta_allowance() && room > 0) {
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
    if (row_bytes - at.off > kAhead * unit) {
      memory_.prefetch(s.sm, a + kAhead * unit);
    } else if (at.row + rows_ahead < rows) {
      memory_.prefetch(s.sm, a + static_cast<core::Bytes>(rows_ahead) * op.row_stride);
    }
    const double lsu_from = std::max(now, sm.lsu.free_at());  // when the LSU starts on the piece
    const double issue = sm.lsu.serve(now, static_cast<double>(piece));
    double done;
    if (dither) {
      // Block model: a unit's credits come back when its lines' would in the line model, which
      // returns them in chunks of allowance / 4, each when its last line is back. The piece's
      // lines leave the LSU one after another over issue - lsu_from (16 cycles for 2 KiB on
      // h200), and so do their DRAM requests, as the line model's do line by line. Sent all at
      // `issue`, a unit's credits came back later than its lines' would, and a credit-limited
      // CTA, whose bandwidth is its allowance over that round trip, lost as much (one CTA of
      // stream_read on h200: mean round trip 687 cycles against the line model's 671; 682 with
      // the requests spread).
      double credit_at = 0;
      done = memory_.read_credit(issue, s.sm, a, static_cast<std::uint32_t>(piece), op.tensor, via_l1,
                                 credits_.credit_group(), credit_at, issue - lsu_from);
      chunk_done = std::max(chunk_done, credit_at);
    } else {
      done = memory_.read(issue, s.sm, a, static_cast<std::uint32_t>(piece), op.tensor, via_l1);
      chunk_done = std::max(chunk_done, done);
    }
    at.done = std::max(at.done, done);
    at.off += piece;
    if (at.off >= row_bytes) {
      at.off = 0;
      ++at.row;
    }
    if (chunk >= credits_.chunk_bytes()) {
      queue_.push(chunk_done, EventKind::kCredit, slot, chunk);
      chunk = 0;
      chunk_done = now;
    }
  }
  if (chunk > 0) queue_.push(chunk_done, EventKind::kCredit, slot, chunk);
  // An async copy's bytes issued by this call are written into shared memory: they hold the SM's
  // banks from now (a no-op where fills take no banks).
  if (op.async) fill(sm, static_cast<core::Bytes>(at.row) * row_bytes + at.off - issued_from, now);
  if (at.row < rows) {
    // Resume when kResumeLines lines of room are back (or the rest of the load, if less), so
    // that returned credits coalesce instead of splitting into ever smaller chunks. Each term
    // is at least the piece that did not fit and at most the smallest allowance, all of which
    // comes back once this SM's loads in flight complete: the CTA always resumes.
    const core::Bytes left = static_cast<core::Bytes>(rows - at.row) * row_bytes - at.off;
    const core::Bytes need = std::min(credits_.resume_bytes(), left);
    if (!s.waiting_credit) {
      s.credit_need = need;
      credits_.set_waiting(slot, s, sm, true);
    } else {
      s.credit_need = std::min(s.credit_need, need);  // another warp group of the CTA waits already
    }
    return false;
  }
  return true;
}

template <class Memory>
void TileAccess<Memory>::store(std::uint32_t sm_index, Sm& sm, const core::TileOp& op, double now) {
  const bool merge = memory_.block_model() && op.row_stride == op.row_bytes;
  const std::uint32_t rows = merge ? 1 : op.rows;
  const core::Bytes row_bytes = merge ? op.row_bytes * op.rows : op.row_bytes;
  for (std::uint32_t r = 0; r < rows; ++r) {
    core::Bytes off = 0;
    while (off < row_bytes) {
      const core::Bytes a = op.addr + static_cast<core::Bytes>(r) * op.row_stride + off;
      const core::Bytes piece = std::min<core::Bytes>(memory_.unit_rest(a), row_bytes - off);
      const double issue = sm.lsu.serve(now, static_cast<double>(piece));
      memory_.write(issue, sm_index, a, static_cast<std::uint32_t>(piece), op.tensor);
      off += piece;
    }
  }
}

template <class Memory>
double TileAccess<Memory>::warm(std::uint32_t sm_index, const core::TileOp& op, double now, double duration) {
  const bool write = op.kind == core::OpKind::kStore;
  const bool via_l1 = !write && l1_for_sync_loads_ && !op.async;
  const bool merge = memory_.block_model() && op.row_stride == op.row_bytes;
  const std::uint32_t rows = merge ? 1 : op.rows;
  const core::Bytes row_bytes = merge ? op.row_bytes * op.rows : op.row_bytes;
  // Stores pass whole (every dirty line is one DRAM write later); loads only in the sampled
  // sets, scaled by the tile's sectors over the sampled pieces' sectors (a ratio estimate).
  const bool sample = !write && memory_.warm_stride() > 1;
  const auto mark = memory_.warm_mark(op.tensor);
  auto each_piece = [&](auto&& f) {
    for (std::uint32_t r = 0; r < rows; ++r) {
      core::Bytes off = 0;
      while (off < row_bytes) {
        const core::Bytes a = op.addr + static_cast<core::Bytes>(r) * op.row_stride + off;
        const auto piece = static_cast<std::uint32_t>(std::min<core::Bytes>(memory_.unit_rest(a), row_bytes - off));
        off += piece;
        f(a, piece);
      }
    }
  };
  auto warm_piece = [&](core::Bytes a, std::uint32_t piece) { memory_.warm(sm_index, a, piece, op.tensor, write, via_l1); };
  if (!sample) {
    each_piece(warm_piece);
    return memory_.occupy(now, duration, mark);
  }
  constexpr std::size_t kPlans = 4096;
  if (plans_.empty()) plans_.resize(kPlans);
  const std::uint64_t key = (op.addr * 0x9e3779b97f4a7c15ull) ^ (static_cast<std::uint64_t>(rows) << 40) ^
                            (row_bytes << 20) ^ op.row_stride;
  WarmPlan& plan = plans_[(key ^ (key >> 29)) % kPlans];
  if (plan.addr != op.addr || plan.rows != rows || plan.row_bytes != row_bytes || plan.row_stride != op.row_stride ||
      plan.all == 0) {
    plan.addr = op.addr;
    plan.rows = rows;
    plan.row_bytes = row_bytes;
    plan.row_stride = op.row_stride;
    plan.all = plan.warmed = 0;
    plan.pieces.clear();
    each_piece([&](core::Bytes a, std::uint32_t piece) {
      const std::uint32_t sectors = memory_.sectors_of(a, piece);
      plan.all += sectors;
      if (!memory_.in_warm_sample(a)) return;
      plan.warmed += sectors;
      plan.pieces.push_back({a, piece});
    });
  }
  if (plan.warmed == 0) {
    each_piece(warm_piece);  // no piece in the sampled sets: every piece (counted once)
  } else {
    for (const auto& [a, piece] : plan.pieces) warm_piece(a, piece);
    if (plan.warmed < plan.all)
      memory_.warm_scale(mark, op.tensor, static_cast<double>(plan.all) / static_cast<double>(plan.warmed));
  }
  return memory_.occupy(now, duration, mark);
}

template class TileAccess<MemorySystem>;
template class TileAccess<ScratchpadMemory>;
template bool TileAccess<MemorySystem>::load_as<LineAccess>(std::uint32_t, CtaSlot&, const core::TileOp&, LoadCursor&, Sm&, double);
template bool TileAccess<MemorySystem>::load_as<BlockAccess>(std::uint32_t, CtaSlot&, const core::TileOp&, LoadCursor&, Sm&, double);
template bool TileAccess<ScratchpadMemory>::load_as<LineAccess>(std::uint32_t, CtaSlot&, const core::TileOp&, LoadCursor&, Sm&, double);
template bool TileAccess<ScratchpadMemory>::load_as<BlockAccess>(std::uint32_t, CtaSlot&, const core::TileOp&, LoadCursor&, Sm&, double);

}  // namespace attnsim::engine
