// The CUDA occupancy rules against every launch measured on an H200 (tests/data/reference/kernels.csv),
// with the SM described by the device attributes the same machine reported (microbench.json).
#include "sim/core/occupancy.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/errors.h"

namespace attnsim::core {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// RFC 4180 fields: quoted fields may hold commas and doubled quotes.
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<std::map<std::string, std::string>> read_kernels_csv() {
  std::ifstream in(std::string(ATTNSIM_REFERENCE_DIR) + "/kernels.csv");
  EXPECT_TRUE(in.good());
  std::string line;
  std::getline(in, line);
  const auto header = split_csv_line(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto f = split_csv_line(line);
    EXPECT_EQ(f.size(), header.size()) << line;
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

std::uint64_t attribute(const nlohmann::json& json, const std::string& name) {
  const auto& attrs = json.at("device_attributes");
  const auto it = attrs.find("device__attribute_" + name);
  const bool found = it != attrs.end() && it->is_number_unsigned();
  EXPECT_TRUE(found) << name;
  return found ? it->get<std::uint64_t>() : 0;
}

// The H200's SM from its reported device attributes; allocation units and carve-outs from the
// CUDA Programming Guide (compute capability 9.0: 256 registers per warp allocation, 128-byte
// shared-memory granularity, carve-outs 0..228 KiB).
SmSpec h200_sm() {
  const nlohmann::json json = nlohmann::json::parse(read_text(std::string(ATTNSIM_REFERENCE_DIR) + "/microbench.json"));
  SmSpec sm;
  sm.count = static_cast<std::uint32_t>(attribute(json, "multiprocessor_count"));
  sm.warp_size = static_cast<std::uint32_t>(attribute(json, "warp_size"));
  sm.max_threads_per_sm = static_cast<std::uint32_t>(attribute(json, "max_threads_per_multiprocessor"));
  sm.max_warps_per_sm = static_cast<std::uint32_t>(attribute(json, "max_warps_per_multiprocessor"));
  sm.max_blocks_per_sm = static_cast<std::uint32_t>(attribute(json, "max_blocks_per_multiprocessor"));
  sm.max_threads_per_block = 1024;
  sm.registers_per_sm = static_cast<std::uint32_t>(attribute(json, "max_registers_per_multiprocessor"));
  sm.max_registers_per_thread = static_cast<std::uint32_t>(attribute(json, "max_registers_per_thread"));
  sm.max_registers_per_block = static_cast<std::uint32_t>(attribute(json, "max_registers_per_block"));
  sm.register_allocation_unit = 256;
  sm.schedulers_per_sm = static_cast<std::uint32_t>(attribute(json, "num_schedulers_per_multiprocessor"));
  sm.shared_mem_per_sm_bytes = attribute(json, "max_shared_memory_per_multiprocessor");
  sm.shared_mem_per_block_optin_bytes = attribute(json, "max_shared_memory_per_block_optin");
  sm.shared_mem_reserved_per_block_bytes = attribute(json, "reserved_shared_memory_per_block");
  sm.shared_mem_allocation_unit_bytes = 128;
  for (Bytes kib : {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}) sm.shared_mem_carveouts_bytes.push_back(kib * 1024);
  sm.l1_shared_total_bytes = 256 * 1024;
  return sm;
}

OccupancyInput input_of(const std::map<std::string, std::string>& row, bool with_carveout) {
  OccupancyInput in;
  in.threads_per_block = static_cast<std::uint32_t>(std::stoul(row.at("launch__block_size")));
  in.regs_per_thread = static_cast<std::uint32_t>(std::stoul(row.at("launch__registers_per_thread")));
  in.smem_per_block = std::stoull(row.at("launch__shared_mem_per_block_static")) +
                      std::stoull(row.at("launch__shared_mem_per_block_dynamic"));
  if (with_carveout) in.carveout_bytes = std::stoull(row.at("launch__shared_mem_config_size"));
  return in;
}

TEST(Occupancy, ReferenceCsvHasEveryLaunch) {
  const auto rows = read_kernels_csv();
  ASSERT_EQ(rows.size(), 27u);
  // The quoted kernel names hold commas; a naive split would shift the launch columns.
  EXPECT_EQ(rows[1].at("launch__block_size"), "128");
  EXPECT_EQ(rows[1].at("launch__registers_per_thread"), "48");
}

TEST(Occupancy, ReproducesEveryMeasuredLimitOnH200) {
  const SmSpec sm = h200_sm();
  for (const auto& row : read_kernels_csv()) {
    const auto r = compute_occupancy(sm, input_of(row, true));
    const std::string what = row.at("label") + " #" + row.at("kernel_index");
    EXPECT_EQ(r.limit_blocks, std::stoul(row.at("launch__occupancy_limit_blocks"))) << what;
    EXPECT_EQ(r.limit_registers, std::stoul(row.at("launch__occupancy_limit_registers"))) << what;
    EXPECT_EQ(r.limit_shared_mem, std::stoul(row.at("launch__occupancy_limit_shared_mem"))) << what;
    EXPECT_EQ(r.limit_warps, std::stoul(row.at("launch__occupancy_limit_warps"))) << what;
    EXPECT_DOUBLE_EQ(r.max_warps_pct, std::stod(row.at("sm__maximum_warps_per_active_cycle_pct"))) << what;
  }
}

TEST(Occupancy, DefaultCarveoutIsTheDriversChoiceInEveryMeasuredLaunch) {
  // Without a requested carve-out: the carve-out the driver picked (launch__shared_mem_config_size)
  // and the four limits computed against it, for every launch measured on the H200.
  const SmSpec sm = h200_sm();
  std::size_t exact = 0;
  for (const auto& row : read_kernels_csv()) {
    const auto r = compute_occupancy(sm, input_of(row, false));
    const std::string what = row.at("label") + " #" + row.at("kernel_index") + " " + row.at("kernel_name").substr(0, 40);
    EXPECT_EQ(r.carveout_bytes, std::stoull(row.at("launch__shared_mem_config_size"))) << what;
    EXPECT_EQ(r.limit_blocks, std::stoul(row.at("launch__occupancy_limit_blocks"))) << what;
    EXPECT_EQ(r.limit_registers, std::stoul(row.at("launch__occupancy_limit_registers"))) << what;
    EXPECT_EQ(r.limit_shared_mem, std::stoul(row.at("launch__occupancy_limit_shared_mem"))) << what;
    EXPECT_EQ(r.limit_warps, std::stoul(row.at("launch__occupancy_limit_warps"))) << what;
    EXPECT_DOUBLE_EQ(r.max_warps_pct, std::stod(row.at("sm__maximum_warps_per_active_cycle_pct"))) << what;
    exact += r.carveout_bytes == std::stoull(row.at("launch__shared_mem_config_size")) &&
             r.limit_shared_mem == std::stoul(row.at("launch__occupancy_limit_shared_mem"));
  }
  EXPECT_EQ(exact, 27u);
}

TEST(Occupancy, DefaultCarveoutHoldsOneBlockMoreThanTheWarpSlots) {
  // softmax_warp_forward (kernels.csv): no shared memory, 4 warps, 80 registers. Warps allow 16
  // blocks, registers 6; the driver sized for 16 + 1 blocks of 1 KiB (the reserve): 32 KiB, 32
  // blocks by shared memory. Registers do not enter the choice (they would give 8 KiB).
  const auto r = compute_occupancy(h200_sm(), {128, 80, 0, std::nullopt});
  EXPECT_EQ(r.carveout_bytes, 32u * 1024);
  EXPECT_EQ(r.limit_shared_mem, 32u);
  EXPECT_EQ(r.limit_registers, 6u);
}

TEST(Occupancy, DefaultCarveoutStopsAtHalfTheSharedMemory) {
  // 4 warps, 255 registers, 48 KiB + 1 KiB reserve = 50176 B: 17 blocks would need 833 KiB; the
  // headroom stops at half of 228 KiB (116736 B), rounded up to the 132 KiB carve-out, which holds
  // 2 blocks, all the registers allow (100 KiB would too, but is not what the driver picked:
  // kernels.csv, d = 64 flash).
  const auto r = compute_occupancy(h200_sm(), {128, 255, 49152, std::nullopt});
  EXPECT_EQ(r.carveout_bytes, 132u * 1024);
  EXPECT_EQ(r.limit_shared_mem, 2u);
}

TEST(Occupancy, DefaultCarveoutNeverLowersOccupancyBelowTheOtherLimits) {
  // 4 warps, 32 registers (16 blocks by registers and by warps), 32 KiB + 1 KiB reserve each:
  // half the SM would hold 3; the choice takes the largest carve-out instead, 6 blocks.
  const auto r = compute_occupancy(h200_sm(), {128, 32, 32768, std::nullopt});
  EXPECT_EQ(r.limit_registers, 16u);
  EXPECT_EQ(r.carveout_bytes, 228u * 1024);
  EXPECT_EQ(r.limit_shared_mem, 6u);
}

TEST(Occupancy, DefaultCarveoutExceedsHalfWhenOneBlockNeedsIt) {
  // 213188 B + 1 KiB reserve, rounded to 128 B = 214272 B > half: the 228 KiB carve-out.
  const auto r = compute_occupancy(h200_sm(), {384, 168, 213188, std::nullopt});
  EXPECT_EQ(r.carveout_bytes, 228u * 1024);
  EXPECT_EQ(r.limit_shared_mem, 1u);
}

TEST(Occupancy, RegisterAllocationRoundsPerWarp) {
  // 33 registers x 32 threads = 1056 -> 1280 per warp (unit 256); 16384 per sub-partition
  // holds 12 warps, 48 per SM; blocks of 8 warps: 6. Unrounded (1056) it would be 7.
  const auto r = compute_occupancy(h200_sm(), {256, 33, 0, std::nullopt});
  EXPECT_EQ(r.limit_registers, 6u);
}

TEST(Occupancy, RegisterLimitCountsWarpsPerSubPartition) {
  // 200 registers -> 6400 per warp: 16384/6400 = 2 warps per sub-partition, 8 per SM, whereas
  // pooling the SM's registers (65536/6400 = 10 warps) would allow more.
  const auto r = compute_occupancy(h200_sm(), {160, 200, 0, std::nullopt});
  EXPECT_EQ(r.limit_registers, 1u);  // 8 / 5 warps per block, not 10 / 5 = 2
  const auto r2 = compute_occupancy(h200_sm(), {64, 200, 0, std::nullopt});
  EXPECT_EQ(r2.limit_registers, 4u);  // 8 / 2, not 10 / 2 = 5
}

TEST(Occupancy, SharedMemoryIncludesReservePerBlock) {
  // 128 B + 1 KiB reserve = 1152 B per block; an 8 KiB carve-out holds 7, not 64.
  const auto r = compute_occupancy(h200_sm(), {1024, 30, 128, Bytes{8192}});
  EXPECT_EQ(r.limit_shared_mem, 7u);
}

TEST(Occupancy, WarpLimitRoundsThreadsUpToWarps) {
  // 33 threads occupy 2 warps: 64 / 2 = 32 blocks by warps.
  const auto r = compute_occupancy(h200_sm(), {33, 16, 0, std::nullopt});
  EXPECT_EQ(r.limit_warps, 32u);
  EXPECT_EQ(r.active_warps, 64u);
}

TEST(Occupancy, LimiterNamesSmallestLimit) {
  const auto r = compute_occupancy(h200_sm(), {128, 255, 0, std::nullopt});
  EXPECT_EQ(r.limiter, "registers");
  EXPECT_EQ(r.active_blocks, 2u);
  const auto w = compute_occupancy(h200_sm(), {1024, 16, 0, std::nullopt});
  EXPECT_EQ(w.limiter, "warps");
}

TEST(Occupancy, TooManyThreadsCannotLaunch) {
  EXPECT_THROW(compute_occupancy(h200_sm(), {1025, 32, 0, std::nullopt}), ConfigError);
}

TEST(Occupancy, TooMuchSharedMemoryCannotLaunch) {
  EXPECT_THROW(compute_occupancy(h200_sm(), {128, 32, 232448 + 1, std::nullopt}), ConfigError);
}

TEST(Occupancy, TooManyRegistersPerBlockCannotLaunch) {
  // 1024 threads x 255 registers = 32 warps x 8192 = 262144 > 65536 per block.
  EXPECT_THROW(compute_occupancy(h200_sm(), {1024, 255, 0, std::nullopt}), ConfigError);
}

TEST(Occupancy, ZeroThreadsIsAnError) {
  EXPECT_THROW(compute_occupancy(h200_sm(), {0, 32, 0, std::nullopt}), ConfigError);
}

}  // namespace
}  // namespace attnsim::core
