// Test helpers: a hand-built device (no YAML) and a KernelLaunch whose CTAs replay fixed ops.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/device_spec.h"
#include "sim/core/run_result.h"
#include "sim/core/tile_program.h"
#include "sim/io/launch_metrics.h"

namespace attnsim::engine::testing {

// The named metrics (sim/io names the engine's typed totals), with the derived ones if added.
inline double metric(const core::KernelResult& r, const char* name) {
  const core::Metrics named = r.metrics.empty() ? io::launch_metrics(r.totals) : r.metrics;
  const core::Metric* m = core::find_metric(named, name);
  EXPECT_NE(m, nullptr) << name;
  return m ? m->value : -1;
}

// A small GPU with round numbers: 4 SMs, 1 GHz, 4 HBM channels of 64 B/cycle each (256 GB/s),
// latency 100; L2 1 MiB, 16-way, one partition, near hit 20; no in-flight limits.
inline core::DeviceSpec small_gpu() {
  core::DeviceSpec d;
  d.name = "test-gpu";
  d.clock_ghz = 1.0;
  d.hbm.channels = 4;
  d.hbm.interleave_bytes = 256;
  d.hbm.bandwidth_gbps = 256;
  d.hbm.latency_cycles = 100;
  d.l2.capacity_bytes = 1 << 20;
  d.l2.associativity = 16;
  d.l2.partitions = 1;
  d.l2.near_hit_latency_cycles = 20;
  d.l2.far_hit_latency_cycles = 40;
  d.l2.bandwidth_gbps = 4096;
  d.sm.count = 4;
  d.sm.shared_mem_per_sm_bytes = 100 * 1024;
  d.sm.shared_mem_per_block_optin_bytes = 99 * 1024;
  d.sm.shared_mem_carveouts_bytes = {0, 8192, 16384, 32768, 65536, 102400};
  d.sm.l1_shared_total_bytes = 128 * 1024;
  d.sm.l1_caches_global_loads = false;
  d.sm.shared_mem_latency_cycles = 10;
  d.sm.tensor_flops_per_cycle = 1024;
  d.sm.fp32_flops_per_cycle = 128;
  d.sm.exp_per_cycle = 16;
  d.sm.load_bytes_per_cycle = 1e6;
  return d;
}

// Every CTA runs `ops_of(cta)` as its single step.
class ScriptedLaunch : public core::KernelLaunch {
 public:
  using Script = std::function<std::vector<core::TileOp>(std::uint64_t cta)>;
  ScriptedLaunch(std::uint64_t ctas, std::uint32_t threads, core::Bytes smem, Script s)
      : ctas_(ctas), threads_(threads), smem_(smem), script_(std::move(s)) {}
  std::string name() const override { return "scripted"; }
  core::LaunchShape shape() const override {
    core::LaunchShape s;
    s.grid_x = ctas_;
    s.threads_per_cta = threads_;
    s.regs_per_thread = 32;
    s.smem_dynamic_bytes = smem_;
    return s;
  }
  bool emit_step(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& out) const override {
    if (step > 0) return false;
    out = script_(cta);
    return true;
  }

 private:
  std::uint64_t ctas_;
  std::uint32_t threads_;
  core::Bytes smem_;
  Script script_;
};

inline core::TileOp load(core::Bytes addr, std::uint32_t rows, std::uint32_t row_bytes, core::Bytes stride,
                         bool async, core::Tensor t = core::Tensor::kK) {
  core::TileOp op;
  op.kind = core::OpKind::kLoad;
  op.tensor = t;
  op.async = async;
  op.rows = rows;
  op.row_bytes = row_bytes;
  op.addr = addr;
  op.row_stride = stride;
  return op;
}

inline core::TileOp store(core::Bytes addr, std::uint32_t rows, std::uint32_t row_bytes, core::Bytes stride,
                          core::Tensor t = core::Tensor::kO) {
  core::TileOp op = load(addr, rows, row_bytes, stride, false, t);
  op.kind = core::OpKind::kStore;
  return op;
}

inline core::TileOp simple(core::OpKind k, std::uint64_t count = 0) {
  core::TileOp op;
  op.kind = k;
  op.count = count;
  return op;
}

inline core::TileProgram program_of(std::unique_ptr<core::KernelLaunch> launch) {
  core::TileProgram p;
  p.launches.push_back(std::move(launch));
  return p;
}

}  // namespace attnsim::engine::testing
