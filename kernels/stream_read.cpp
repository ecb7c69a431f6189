// stream_read: `programs` CTAs of `warps` warps each read a disjoint contiguous slice of a
// total_bytes buffer, bytes_per_step per loop step, summing what they read (the Triton kernel of
// tests/data/reference/microbench.json). Slices are floor(total / programs / step) steps long, as
// there. The loop is software-pipelined `stages` deep (default 3, Triton's num_stages): the
// load of step i + stages - 1 is issued before step i is consumed (async groups, wait_group
// stages-1), so up to `stages` steps are in flight per CTA. The final 4-byte store of each
// CTA's sum is left out (it is not part of the measured bytes).
// stream_copy: the same loop, storing each step's bytes to the same offset of a second buffer
// (placed after the first, 2-MiB aligned) instead of summing them: a device-to-device copy
// (microbench.json's copy_bandwidth, which counts bytes read + bytes written).
#include <algorithm>
#include <memory>

#include "kernels/factories.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

namespace {

constexpr std::uint32_t kDefaultWarps = 4;
constexpr std::uint32_t kDefaultStages = 3;
constexpr core::Bytes kDefaultStep = 16384;
constexpr core::Bytes kDefaultTotal = core::Bytes{4} << 30;
constexpr std::uint32_t kRegsPerThread = 32;

class StreamLaunch : public core::KernelLaunch {
 public:
  StreamLaunch(const core::Workload& w, std::uint64_t steps_per_cta, bool copy)
      : programs_(w.programs), warps_(w.warps), stages_(w.stages), step_bytes_(w.bytes_per_step),
        steps_(steps_per_cta), copy_(copy) {
    constexpr core::Bytes kAlign = core::Bytes{2} << 20;
    dst_ = (programs_ * steps_ * step_bytes_ + kAlign - 1) / kAlign * kAlign;
  }
  std::string name() const override { return copy_ ? "stream_copy" : "stream_read"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = programs_;
    s.threads_per_cta = warps_ * 32;
    s.regs_per_thread = kRegsPerThread;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    if (step >= steps_) return false;
    const core::Bytes base = cta * steps_ * step_bytes_;
    auto load = [&](std::uint64_t i) {
      if (i < steps_) {
        core::TileOp op;
        op.kind = core::OpKind::kLoad;
        op.tensor = core::Tensor::kBuffer;
        op.async = true;
        op.rows = 1;
        op.row_bytes = static_cast<std::uint32_t>(step_bytes_);
        op.addr = base + i * step_bytes_;
        out.push_back(op);
      }
      core::TileOp commit;
      commit.kind = core::OpKind::kCommit;
      out.push_back(commit);
    };
    if (step == 0)
      for (std::uint64_t i = 0; i + 1 < stages_; ++i) load(i);
    load(step + stages_ - 1);
    core::TileOp wait;
    wait.kind = core::OpKind::kWait;
    wait.count = stages_ - 1;
    out.push_back(wait);
    if (copy_) {
      core::TileOp store;
      store.kind = core::OpKind::kStore;
      store.tensor = core::Tensor::kBuffer;
      store.rows = 1;
      store.row_bytes = static_cast<std::uint32_t>(step_bytes_);
      store.addr = dst_ + base + step * step_bytes_;
      out.push_back(store);
      return true;
    }
    core::TileOp add;
    add.kind = core::OpKind::kElementwise;
    add.count = step_bytes_ / 2;  // one fp32 add per fp16 element
    out.push_back(add);
    return true;
  }

 private:
  std::uint64_t programs_;
  std::uint32_t warps_, stages_;
  core::Bytes step_bytes_;
  std::uint64_t steps_;
  bool copy_;
  core::Bytes dst_ = 0;  // stream_copy: where the second buffer starts
};

core::ConfigError bad(const std::string& key, const std::string& what) {
  return core::ConfigError(core::ConfigProblem{"", 0, key, what});
}

core::TileProgram make_stream(const core::Workload& workload, const core::DeviceSpec& device, bool copy) {
  core::TileProgram p;
  p.workload = workload;
  core::Workload& w = p.workload;
  if (w.programs == 0) w.programs = 4ull * device.sm.count;
  if (w.warps == 0) w.warps = kDefaultWarps;
  if (w.stages == 0) w.stages = kDefaultStages;
  if (w.bytes_per_step == 0) w.bytes_per_step = kDefaultStep;
  if (w.total_bytes == 0) w.total_bytes = kDefaultTotal;
  if (w.bytes_per_step > 0xffffffffull) throw bad("bytes_per_step", "must be below 4 GiB");
  const std::uint64_t steps = w.total_bytes / w.programs / w.bytes_per_step;
  if (steps == 0)
    throw bad("total_bytes", "total_bytes " + std::to_string(w.total_bytes) + " gives no full step of " +
                                 std::to_string(w.bytes_per_step) + " bytes to each of " +
                                 std::to_string(w.programs) + " programs");
  p.launches.push_back(std::make_unique<StreamLaunch>(w, steps, copy));
  return p;
}

}  // namespace

core::TileProgram make_stream_read(const core::Workload& workload, const core::DeviceSpec& device) {
  return make_stream(workload, device, false);
}

core::TileProgram make_stream_copy(const core::Workload& workload, const core::DeviceSpec& device) {
  return make_stream(workload, device, true);
}

}  // namespace attnsim::kernels
