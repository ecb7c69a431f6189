// Shared fixtures for the io tests: a small hand-built RunResult and a scratch directory.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/core/run_result.h"
#include "sim/io/point_record.h"

namespace attnsim::io::testing {

inline core::RunResult small_result(double scale = 1.0) {
  core::RunResult r;
  r.workload.kernel = "flash2";
  r.device_name = "teaching";
  core::KernelResult k;
  k.name = "flash2_fwd";
  k.metrics = {{"dram__bytes_read.sum", 4096 * scale},
               {"gpu__time_duration.sum", 1000.25 * scale},
               {"launch__occupancy_limit_registers", 2},
               {"launch__occupancy_limit_shared_mem", 1}};
  k.occupancy_limiter = "shared_mem";
  k.tensors.dram[core::Tensor::kQ] = {1024, 0};
  k.tensors.dram[core::Tensor::kO] = {0, 2048};
  k.tensors.lts[core::Tensor::kK] = {3072, 0};
  k.series.period_ns = 100;
  k.series.names = {"time_ns", "dram_gbps"};
  k.series.columns = {{0, 100, 200}, {1.5, 2.5, 0.1}};
  r.kernels = {k, k};
  r.kernels[1].name = "flash2_bwd";
  r.metrics = {{"dram__bytes_read.sum", 8192 * scale}, {"gpu__time_duration.sum", 2000.5 * scale}};
  r.tensors = k.tensors;
  r.tensors += k.tensors;
  return r;
}

inline PointRecord ok_point(std::uint64_t index, std::int64_t block) {
  PointRecord p;
  p.index = index;
  p.params = {{"block_m", block}, {"device", std::string("teaching")}};
  p.config_yaml = "kernel: flash2\nblock_m: " + std::to_string(block) + "\n";
  p.result = small_result(static_cast<double>(block));
  return p;
}

inline PointRecord impossible_point(std::uint64_t index, std::int64_t block) {
  PointRecord p;
  p.index = index;
  p.status = kStatusImpossible;
  p.reason = "block_n <= block_m is false";
  p.params = {{"block_m", block}, {"device", std::string("teaching")}};
  p.config_yaml = "kernel: flash2\n";
  return p;
}

inline std::string scratch_dir(const std::string& name) {
  const auto d = std::filesystem::path(::testing::TempDir()) / ("attnsim_io_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

}  // namespace attnsim::io::testing
