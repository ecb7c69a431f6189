// pointer_chase: one CTA of one warp; one thread follows a random cyclic permutation of 128-B
// lines spanning working_set_bytes with dependent (blocking) 8-byte loads. As in the measured
// benchmark (tests/data/reference/microbench.json), one untimed warm traversal of the whole cycle
// precedes the `loads` timed loads when the working set is at most 128 MiB; the engine reports
// attnsim__cycles_per_load over the timed loads only.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include "kernels/factories.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

namespace {

constexpr core::Bytes kLine = 128;
constexpr core::Bytes kLoadBytes = 8;
constexpr core::Bytes kWarmLimit = core::Bytes{128} << 20;   // warm traversal up to 128 MiB
constexpr core::Bytes kDefaultWorkingSet = core::Bytes{8} << 20;
constexpr std::uint64_t kDefaultLoads = 20000;
constexpr std::uint64_t kLoadsPerStep = 1024;

// The visiting order of a uniformly random cyclic permutation of `lines` lines starting at a
// random line: a uniformly random ordering of all lines. Only the first `count` entries are
// drawn (sparse Fisher-Yates), then repeated cyclically when `count` exceeds `lines`.
std::vector<std::uint32_t> visiting_order(std::uint64_t lines, std::uint64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::uint64_t draw = std::min(lines, count);
  std::vector<std::uint32_t> order;
  order.reserve(count);
  std::unordered_map<std::uint64_t, std::uint64_t> swapped;  // sparse Fisher-Yates
  auto at = [&](std::uint64_t i) {
    auto it = swapped.find(i);
    return it == swapped.end() ? i : it->second;
  };
  for (std::uint64_t i = 0; i < draw; ++i) {
    const std::uint64_t j = i + rng() % (lines - i);
    const std::uint64_t vi = at(i), vj = at(j);
    swapped[j] = vi;
    order.push_back(static_cast<std::uint32_t>(vj));
  }
  for (std::uint64_t i = draw; i < count; ++i) order.push_back(order[i % lines]);
  return order;
}

class PointerChaseLaunch : public core::KernelLaunch {
 public:
  PointerChaseLaunch(std::vector<std::uint32_t> order, std::uint64_t timed_loads)
      : order_(std::move(order)), timed_loads_(timed_loads) {}
  std::string name() const override { return "pointer_chase"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.threads_per_cta = 32;
    s.regs_per_thread = 16;
    s.timed_loads = timed_loads_;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    const std::uint64_t first = step * kLoadsPerStep;
    if (cta != 0 || first >= order_.size()) return false;
    const std::uint64_t last = std::min<std::uint64_t>(order_.size(), first + kLoadsPerStep);
    for (std::uint64_t i = first; i < last; ++i) {
      core::TileOp op;
      op.kind = core::OpKind::kLoad;
      op.tensor = core::Tensor::kBuffer;
      op.async = false;
      op.rows = 1;
      op.row_bytes = kLoadBytes;
      op.addr = static_cast<core::Bytes>(order_[i]) * kLine;
      out.push_back(op);
    }
    return true;
  }

 private:
  std::vector<std::uint32_t> order_;
  std::uint64_t timed_loads_;
};

}  // namespace

core::TileProgram make_pointer_chase(const core::Workload& workload, const core::DeviceSpec&) {
  core::TileProgram p;
  p.workload = workload;
  core::Workload& w = p.workload;
  if (w.working_set_bytes == 0) w.working_set_bytes = kDefaultWorkingSet;
  if (w.working_set_bytes < kLine)
    throw core::ConfigError(core::ConfigProblem{"", 0, "working_set_bytes",
                                                "must be at least one 128-byte line, got " +
                                                    std::to_string(w.working_set_bytes)});
  const std::uint64_t lines = w.working_set_bytes / kLine;
  if (lines > 0xffffffffull)
    throw core::ConfigError(core::ConfigProblem{"", 0, "working_set_bytes", "at most 2^32 lines (512 GiB)"});
  if (w.loads == 0) w.loads = std::min(kDefaultLoads, lines);
  const std::uint64_t warm = w.working_set_bytes <= kWarmLimit ? lines : 0;
  p.launches.push_back(std::make_unique<PointerChaseLaunch>(visiting_order(lines, warm + w.loads, w.seed), w.loads));
  return p;
}

}  // namespace attnsim::kernels
