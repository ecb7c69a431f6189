// flash_decode over a paged K/V cache: the closed form (tokens read, tail predicated) against the
// op stream and the engine with the L2 off, the block table's placement, the one-split launch
// without a combine, and the mechanism: sub-sector pages cost DRAM traffic that a contiguous
// cache does not, and a page layout that coincides with the contiguous one simulates the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "kernels/paged_kv.h"
#include "kernels/registry.h"
#include "sim/config/device_loader.h"
#include "sim/core/io_counts.h"
#include "sim/core/traffic_counter.h"
#include "sim/engine/engine.h"

namespace attnsim::kernels {
namespace {

using core::Tensor;

core::Workload paged(std::uint64_t page, core::PagePlacement placement, std::vector<std::uint64_t> lengths,
                     std::uint64_t heads = 8, std::uint64_t kv_heads = 2, std::uint64_t splits = 3) {
  core::Workload w;
  w.kernel = "flash_decode";
  w.batch = lengths.size();
  w.heads = heads;
  w.kv_heads = kv_heads;
  w.seq_q = 1;
  w.seq_kv = *std::max_element(lengths.begin(), lengths.end());
  w.head_dim = 16;
  w.block_n = 32;
  w.warps = 4;
  w.num_splits = splits;
  w.page_size = page;
  w.page_placement = placement;
  w.page_seed = 3;
  w.kv_lengths.kind = core::KvLengths::Kind::kList;
  w.kv_lengths.list = std::move(lengths);
  return w;
}

core::DeviceSpec device(const std::string& l2_bytes) {
  return config::load_device("teaching", {{"l2.capacity_bytes", l2_bytes}});
}

bool same(const std::vector<core::LaunchTraffic>& a, const std::vector<core::LaunchTraffic>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].kernel_name != b[i].kernel_name || !(a[i].traffic == b[i].traffic)) return false;
  return true;
}

const core::LaunchTraffic& launch_of(const std::vector<core::LaunchTraffic>& t, const std::string& name) {
  for (const auto& l : t)
    if (l.kernel_name == name) return l;
  throw std::runtime_error("no launch " + name);
}

// K/V bytes are the tokens' bytes, whatever the page size: Σ len · kv_heads · d · v per tensor
// (the packed GQA CTA reads its KV head once), not ⌈len / page⌉ · page (whole pages).
TEST(PagedDecode, ClosedFormReadsTheTokensNotWholePages) {
  const std::vector<std::uint64_t> lengths = {300, 17, 129, 64};  // Σ = 510
  for (std::uint64_t page : {0, 1, 7, 16, 64, 256})
    for (auto placement : {core::PagePlacement::kContiguous, core::PagePlacement::kShuffled}) {
      if (page == 0 && placement == core::PagePlacement::kShuffled) continue;
      const core::TileProgram p = make_program(paged(page, placement, lengths), device("0"));
      const auto form = closed_form_traffic(p.workload);
      const auto& split = launch_of(form, "flash_decode_split");
      EXPECT_EQ(split.traffic[Tensor::kK].read, 2u * 510 * 16 * 2) << page;
      EXPECT_EQ(split.traffic[Tensor::kV].read, 2u * 510 * 16 * 2) << page;
      // 3 splits of ⌈10 / 3⌉ = 4 blocks: lengths 300, 17, 129, 64 hold 3, 1, 2, 1 live splits; Q
      // (4 packed rows of 32 B) is read by the live ones, the partials written by all 12.
      EXPECT_EQ(split.traffic[Tensor::kQ].read, 2u * (3 + 1 + 2 + 1) * 4 * 16 * 2) << page;
      EXPECT_EQ(split.traffic[Tensor::kOPartial].write, 4u * 2 * 3 * 4 * 16 * 4) << page;
      // The op stream and the engine with the L2 off give the same bytes per tensor per launch.
      EXPECT_TRUE(same(core::TrafficCounter::count(p), form)) << page;
      const auto got = engine::simulate(device("0"), p);
      ASSERT_EQ(got.size(), form.size());
      for (std::size_t l = 0; l < got.size(); ++l)
        for (std::size_t t = 0; t < core::kNumTensors; ++t)
          EXPECT_EQ(got[l].tensors.dram.by_tensor[t], form[l].traffic.by_tensor[t])
              << page << " " << form[l].kernel_name << " " << core::to_string(static_cast<Tensor>(t));
      EXPECT_TRUE(same(core::TrafficCounter::count_distinct(p), compulsory_traffic(p.workload))) << page;
    }
}

// Unpacked (MHA, seq_q 4) and a uniform draw: the same accounting per (batch, head) CTA row.
TEST(PagedDecode, ClosedFormExactForMhaAndUniformLengths) {
  core::Workload w = paged(7, core::PagePlacement::kShuffled, {1, 1, 1, 1, 1}, 4, 4, 0);
  w.seq_q = 4;
  w.seq_kv = 400;
  w.kv_lengths = core::KvLengths{};
  w.kv_lengths.kind = core::KvLengths::Kind::kUniform;
  w.kv_lengths.min = 1;
  w.kv_lengths.max = 400;
  w.kv_lengths.seed = 8;
  const core::TileProgram p = make_program(w, device("0"));
  std::uint64_t tokens = 0;
  for (auto n : core::sequence_kv_lengths(w)) tokens += n;
  const auto form = closed_form_traffic(p.workload);
  EXPECT_EQ(launch_of(form, "flash_decode_split").traffic[Tensor::kK].read, 4u * tokens * 16 * 2);
  EXPECT_TRUE(same(core::TrafficCounter::count(p), form));
  const auto got = engine::simulate(device("0"), p);
  for (std::size_t l = 0; l < got.size(); ++l)
    for (std::size_t t = 0; t < core::kNumTensors; ++t)
      EXPECT_EQ(got[l].tensors.dram.by_tensor[t], form[l].traffic.by_tensor[t]) << l << " " << t;
}

// FA-2 runs no combine kernel with one split: the split kernel writes O and the fp32 LSE.
TEST(PagedDecode, OneSplitHasNoCombineLaunch) {
  const core::TileProgram p = make_program(paged(16, core::PagePlacement::kShuffled, {300, 17, 129, 64}, 8, 2, 1),
                                           device("0"));
  ASSERT_EQ(p.launches.size(), 1u);
  const auto form = closed_form_traffic(p.workload);
  ASSERT_EQ(form.size(), 1u);
  EXPECT_EQ(form[0].traffic[Tensor::kO].write, 4u * 8 * 16 * 2);
  EXPECT_EQ(form[0].traffic[Tensor::kLse].write, 4u * 8 * 4);
  EXPECT_EQ(form[0].traffic[Tensor::kOPartial].write, 0u);
  EXPECT_TRUE(same(core::TrafficCounter::count(p), form));
  const core::TileProgram three = make_program(paged(16, core::PagePlacement::kShuffled, {300}, 8, 2, 3), device("0"));
  EXPECT_EQ(three.launches.size(), 2u);
}

// The block table: a permutation of the pool, the same for the same seed, another for another.
TEST(PagedDecode, ShuffledPlacementIsADeterministicPermutation) {
  const core::Workload w = paged(4, core::PagePlacement::kShuffled, {300, 17, 129, 64});
  const std::uint64_t pages = 75 + 5 + 33 + 16;
  auto table = [](const core::Workload& x) {
    const PagedKv kv(x);
    std::vector<std::uint64_t> t;
    const std::vector<std::uint64_t> lengths = core::sequence_kv_lengths(x);
    for (std::uint64_t b = 0; b < lengths.size(); ++b)
      for (std::uint64_t p = 0; p < core::ceil_div(lengths[b], x.page_size); ++p) t.push_back(kv.physical_page(b, p));
    return t;
  };
  const auto a = table(w);
  ASSERT_EQ(a.size(), pages);
  EXPECT_EQ(PagedKv(w).pool_pages(), pages);
  std::vector<std::uint64_t> sorted = a, iota(pages);
  std::sort(sorted.begin(), sorted.end());
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(a, iota);
  EXPECT_EQ(table(w), a);
  core::Workload other = w;
  other.page_seed = 4;
  EXPECT_NE(table(other), a);
  core::Workload in_order = w;
  in_order.page_placement = core::PagePlacement::kContiguous;
  EXPECT_EQ(table(in_order), iota);
  // The op streams (every K/V address) are the same for the same seed: runs are reproducible.
  auto addrs = [](const core::Workload& x) {
    const core::TileProgram p = make_program(x, device("0"));
    std::vector<core::Bytes> out;
    std::vector<core::TileOp> ops;
    for (std::uint64_t cta = 0; cta < 8; ++cta)
      for (std::uint64_t s = 0; p.launches[0]->emit_step(cta, s, ops); ++s) {
      }
    for (const auto& op : ops)
      if (op.tensor == Tensor::kK) out.push_back(op.addr);
    return out;
  };
  EXPECT_EQ(addrs(w), addrs(w));
  EXPECT_NE(addrs(w), addrs(other));
}

// Pages of one token of 16 B (head_dim 8, fp16) hold half a 32-B sector each: the other half is
// another KV head's token. Scattered over the pool, a sector is fetched for one CTA and evicted
// before its other half's CTA reads it, so DRAM moves more than the contiguous cache for the same
// bytes requested (closed forms equal). Without paging the two runs would be identical.
TEST(PagedDecode, SubSectorPagesCostDramTrafficTheContiguousCacheDoesNot) {
  auto w_of = [](std::uint64_t page, core::PagePlacement placement) {
    core::Workload w = paged(page, placement, {512, 512}, 4, 2, 0);
    w.head_dim = 8;
    w.block_n = 0;
    w.kv_lengths = core::KvLengths{};
    return w;
  };
  const core::DeviceSpec dev = device("32768");  // a 32 KiB L2: less than K + V (64 KiB)
  const core::TileProgram flat = make_program(w_of(0, core::PagePlacement::kContiguous), dev);
  const core::TileProgram scattered = make_program(w_of(1, core::PagePlacement::kShuffled), dev);
  EXPECT_TRUE(same(closed_form_traffic(flat.workload), closed_form_traffic(scattered.workload)));
  auto dram_kv = [&](const core::TileProgram& p) {
    core::Bytes sum = 0;
    for (const auto& r : engine::simulate(dev, p))
      sum += r.tensors.dram[Tensor::kK].read + r.tensors.dram[Tensor::kV].read;
    return sum;
  };
  const core::Bytes flat_bytes = dram_kv(flat), scattered_bytes = dram_kv(scattered);
  EXPECT_EQ(flat_bytes, 2u * 2 * 2 * 512 * 16);  // K and V once: each sector's halves read together
  EXPECT_GT(scattered_bytes, flat_bytes * 105 / 100) << scattered_bytes << " vs " << flat_bytes;
}

// One KV head, lengths a multiple of the page and pages in order: token t of sequence b sits at
// (b·seq_kv + t)·d·v in both layouts, so the paged run is the contiguous one, metric for metric;
// shuffling the same pages moves the addresses.
TEST(PagedDecode, PagesInOrderOfOneKvHeadAreTheContiguousCache) {
  const core::DeviceSpec dev = device("262144");
  const core::Workload contiguous = paged(0, core::PagePlacement::kContiguous, {256, 256, 256}, 4, 1, 2);
  const core::Workload in_order = paged(32, core::PagePlacement::kContiguous, {256, 256, 256}, 4, 1, 2);
  const core::Workload shuffled = paged(32, core::PagePlacement::kShuffled, {256, 256, 256}, 4, 1, 2);
  const auto a = engine::simulate(dev, make_program(contiguous, dev));
  const auto b = engine::simulate(dev, make_program(in_order, dev));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t l = 0; l < a.size(); ++l) {
    EXPECT_EQ(a[l].totals.cycles, b[l].totals.cycles);
    EXPECT_EQ(a[l].totals.memory.lts_sectors, b[l].totals.memory.lts_sectors);
    EXPECT_EQ(a[l].tensors.dram, b[l].tensors.dram);
  }
  std::set<core::Bytes> first, second;
  std::vector<core::TileOp> ops;
  const core::TileProgram pi = make_program(in_order, dev), ps = make_program(shuffled, dev);
  for (std::uint64_t s = 0; pi.launches[0]->emit_step(0, s, ops); ++s) {
  }
  for (const auto& op : ops) first.insert(op.addr);
  ops.clear();
  for (std::uint64_t s = 0; ps.launches[0]->emit_step(0, s, ops); ++s) {
  }
  for (const auto& op : ops) second.insert(op.addr);
  EXPECT_NE(first, second);
}

}  // namespace
}  // namespace attnsim::kernels
