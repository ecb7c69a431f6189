#include "sim/core/traffic_counter.h"

#include <algorithm>
#include <utility>

namespace attnsim::core {

namespace {

template <typename Visit>
void for_each_op(const KernelLaunch& launch, Visit&& visit) {
  std::vector<TileOp> ops;
  const std::uint64_t ctas = launch.shape().num_ctas();
  const std::size_t groups = launch.warp_groups().size();
  for (std::uint64_t cta = 0; cta < ctas; ++cta) for_each_cta_op(launch, groups, cta, ops, visit);
}

using Intervals = std::vector<std::pair<Bytes, Bytes>>;  // [begin, end)

Bytes union_bytes(Intervals& v) {
  std::sort(v.begin(), v.end());
  Bytes total = 0, cur_b = 0, cur_e = 0;
  bool open = false;
  for (const auto& [b, e] : v) {
    if (open && b <= cur_e) {
      cur_e = std::max(cur_e, e);
      continue;
    }
    if (open) total += cur_e - cur_b;
    cur_b = b;
    cur_e = e;
    open = true;
  }
  if (open) total += cur_e - cur_b;
  return total;
}

}  // namespace

LaunchTraffic TrafficCounter::count(const KernelLaunch& launch) {
  LaunchTraffic out{launch.name(), {}};
  for_each_op(launch, [&](const TileOp& op) {
    if (op.kind == OpKind::kLoad) out.traffic[op.tensor].read += op.bytes();
    if (op.kind == OpKind::kStore) out.traffic[op.tensor].write += op.bytes();
  });
  return out;
}

std::vector<LaunchTraffic> TrafficCounter::count(const TileProgram& program) {
  std::vector<LaunchTraffic> out;
  for (const auto& l : program.launches) out.push_back(count(*l));
  return out;
}

LaunchTraffic TrafficCounter::count_distinct(const KernelLaunch& launch) {
  std::vector<Intervals> reads(kNumTensors), writes(kNumTensors);
  for_each_op(launch, [&](const TileOp& op) {
    if (op.kind != OpKind::kLoad && op.kind != OpKind::kStore) return;
    auto& v = (op.kind == OpKind::kLoad ? reads : writes)[static_cast<std::size_t>(op.tensor)];
    for (std::uint32_t r = 0; r < op.rows; ++r) {
      const Bytes b = op.addr + r * op.row_stride;
      v.emplace_back(b, b + op.row_bytes);
    }
  });
  LaunchTraffic out{launch.name(), {}};
  for (std::size_t t = 0; t < kNumTensors; ++t) {
    out.traffic.by_tensor[t].read = union_bytes(reads[t]);
    out.traffic.by_tensor[t].write = union_bytes(writes[t]);
  }
  return out;
}

std::vector<LaunchTraffic> TrafficCounter::count_distinct(const TileProgram& program) {
  std::vector<LaunchTraffic> out;
  for (const auto& l : program.launches) out.push_back(count_distinct(*l));
  return out;
}

}  // namespace attnsim::core
