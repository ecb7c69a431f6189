// Device presets load, match their published sources, round-trip through YAML, and the
// lookup and --set overrides behave as documented.
#include "sim/config/device_loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/core/errors.h"

namespace attnsim::config {
namespace {

namespace fs = std::filesystem;

const char* const kPresets[] = {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "teaching", "scratchpad-accel"};

TEST(DeviceLoader, EveryPresetLoads) {
  for (const char* name : kPresets) {
    const auto d = load_device(name);
    EXPECT_EQ(d.name, name);
    EXPECT_FALSE(d.source_file.empty());
  }
}

TEST(DeviceLoader, PresetNamesListEveryPreset) {
  const auto names = device_preset_names();
  for (const char* name : kPresets) EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(DeviceLoader, H200MatchesDriverReportedAttributes) {
  // Numbers from tests/data/reference/microbench.json device_attributes.
  const auto d = load_device("h200");
  EXPECT_EQ(d.sm.count, 132u);
  EXPECT_EQ(d.l2.capacity_bytes, 62914560u);
  EXPECT_EQ(d.sm.shared_mem_per_sm_bytes, 233472u);
  EXPECT_EQ(d.sm.shared_mem_per_block_optin_bytes, 232448u);
  EXPECT_EQ(d.sm.shared_mem_reserved_per_block_bytes, 1024u);
  EXPECT_EQ(d.sm.registers_per_sm, 65536u);
  EXPECT_EQ(d.sm.max_blocks_per_sm, 32u);
  EXPECT_EQ(d.sm.max_warps_per_sm, 64u);
  EXPECT_DOUBLE_EQ(d.clock_ghz, 1.98);
  EXPECT_DOUBLE_EQ(d.sm.tensor_clock_ghz, 1.83);  // the whitepaper's clock for the dense tensor peak
  EXPECT_EQ(d.compute_capability, 90u);
}

TEST(DeviceLoader, TensorClockAboveTheSmClockIsBadInput) {
  try {
    load_device("h200", {{"sm.tensor_clock_ghz", "2.5"}});
    FAIL() << "tensor clock above clock_ghz accepted";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sm.tensor_clock_ghz: must be between 0 and clock_ghz (1.98)"), std::string::npos)
        << e.what();
  }
  // The SM clock lowered alone leaves the preset's tensor clock above it: the message says what to set.
  try {
    load_device("h100-sxm", {{"clock_ghz", "0.5"}});
    FAIL() << "tensor clock above a lowered clock_ghz accepted";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("clock_ghz (0.5); with a lower clock_ghz set sm.tensor_clock_ghz too"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeviceLoader, A100CarveoutsFollowTheTuningGuide) {
  const auto d = load_device("a100-40gb");
  const std::vector<core::Bytes> kib = {0, 8, 16, 32, 64, 100, 132, 164};
  ASSERT_EQ(d.sm.shared_mem_carveouts_bytes.size(), kib.size());
  for (std::size_t i = 0; i < kib.size(); ++i) EXPECT_EQ(d.sm.shared_mem_carveouts_bytes[i], kib[i] * 1024);
  EXPECT_EQ(d.sm.count, 108u);
  EXPECT_DOUBLE_EQ(d.hbm.bandwidth_gbps, 1555);
}

TEST(DeviceLoader, ScratchpadPresetHasNoL2) {
  const auto d = load_device("scratchpad-accel");
  EXPECT_EQ(d.kind, core::DeviceKind::kScratchpad);
  EXPECT_EQ(d.l2.capacity_bytes, 0u);
  EXPECT_GT(d.scratchpad.sram_bytes_per_core, 0u);
  EXPECT_GT(d.scratchpad.dma_engines, 0u);
}

TEST(DeviceLoader, TeachingDeviceIsOneByteOfBandwidthPerGbps) {
  const auto d = load_device("teaching");
  EXPECT_DOUBLE_EQ(d.gbps_to_bytes_per_cycle(d.hbm.bandwidth_gbps), 64.0);
  EXPECT_EQ(d.l2.line_bytes, 128u);
  EXPECT_EQ(d.l2.sector_bytes, 32u);
}

TEST(DeviceLoader, EveryPresetRoundTripsThroughYaml) {
  for (const char* name : kPresets) {
    const auto d = load_device(name);
    const std::string text = device_to_yaml(d);
    const fs::path tmp = fs::temp_directory_path() / ("attnsim_rt_" + std::string(name) + ".yaml");
    std::ofstream(tmp) << text;
    const auto back = load_device(tmp.string());
    fs::remove(tmp);
    EXPECT_EQ(device_to_yaml(back), text) << name;
    EXPECT_EQ(back.sm.shared_mem_carveouts_bytes, d.sm.shared_mem_carveouts_bytes);
    EXPECT_DOUBLE_EQ(back.clock_ghz, d.clock_ghz);
    EXPECT_DOUBLE_EQ(back.sm.tensor_clock_ghz, d.sm.tensor_clock_ghz);
  }
}

TEST(DeviceLoader, OverrideTurnsL2Off) {
  const auto d = load_device("h200", {{"l2.capacity_bytes", "0"}});
  EXPECT_EQ(d.l2.capacity_bytes, 0u);
  EXPECT_EQ(d.sm.count, 132u);
}

TEST(DeviceLoader, OverrideAcceptsUnitSizes) {
  const auto d = load_device("teaching", {{"l2.capacity_bytes", "1 MiB"}});
  EXPECT_EQ(d.l2.capacity_bytes, 1048576u);
}

TEST(DeviceLoader, BadOverrideIsLocatedAtSet) {
  try {
    load_device("h200", {{"l2.line_bytes", "100"}});
    FAIL();
  } catch (const core::ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.problems()[0].key_path, "--set device.l2.line_bytes");
    EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos);
  }
}

TEST(DeviceLoader, HbmWriteBandwidthDefaultsToTheReadBandwidthAndMustBePositive) {
  EXPECT_EQ(load_device("h200").hbm.write_bandwidth_gbps, 3800.0);  // calibrated on the copy
  EXPECT_EQ(load_device("a100-40gb").hbm.write_bandwidth_gbps, 0.0);  // 0: writes at bandwidth_gbps
  try {
    load_device("h200", {{"hbm.write_bandwidth_gbps", "0"}});
    FAIL();
  } catch (const core::ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.problems()[0].key_path, "--set device.hbm.write_bandwidth_gbps");
    EXPECT_NE(std::string(e.what()).find("must be positive"), std::string::npos) << e.what();
  }
}

TEST(DeviceLoader, UnknownOverrideKeySuggestsClosest) {
  try {
    load_device("h200", {{"l2.capacty_bytes", "0"}});
    FAIL();
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--set device.l2.capacty_bytes: unknown key (did you mean 'capacity_bytes'?)"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeviceLoader, UnknownPresetListsAvailableOnes) {
  try {
    load_device("h300");
    FAIL();
  } catch (const core::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown device preset 'h300'"), std::string::npos);
    EXPECT_NE(m.find("h200"), std::string::npos);
    EXPECT_NE(m.find("a100-40gb"), std::string::npos);
  }
}

TEST(DeviceLoader, AssociativityIsAPowerOfTwoUpToOneHundredTwentyEight) {
  EXPECT_EQ(load_device("h200", {{"l2.associativity", "128"}}).l2.associativity, 128u);
  try {
    load_device("h200", {{"l2.associativity", "256"}});
    FAIL() << "256 ways accepted";
  } catch (const core::ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 1u) << e.what();
    EXPECT_EQ(e.problems()[0].key_path, "--set device.l2.associativity");
    EXPECT_NE(std::string(e.what()).find("must be at most 128, got 256"), std::string::npos) << e.what();
  }
}

TEST(DeviceLoader, MmaFlavoursPerDevice) {
  const auto h100 = load_device("h100-sxm");
  ASSERT_TRUE(h100.sm.mma.mma_sync.present && h100.sm.mma.wgmma.present);
  EXPECT_FALSE(h100.sm.mma.tcgen05.present);
  EXPECT_LT(h100.sm.mma.mma_sync.flops_per_cycle, h100.sm.mma.wgmma.flops_per_cycle);  // mma.sync below the peak
  EXPECT_EQ(h100.sm.mma.wgmma.flops_per_cycle, h100.sm.tensor_flops_per_cycle);
  EXPECT_EQ(h100.sm.mma.wgmma.issue_warps, 4u);
  EXPECT_EQ(h100.sm.mma.wgmma.fp8_scale, 2.0);
  const auto a100 = load_device("a100-40gb");  // sm_80: mma.sync only, at the dense peak
  EXPECT_TRUE(a100.sm.mma.mma_sync.present);
  EXPECT_FALSE(a100.sm.mma.wgmma.present);
  EXPECT_EQ(a100.sm.mma.mma_sync.flops_per_cycle, a100.sm.tensor_flops_per_cycle);
  EXPECT_FALSE(load_device("teaching").sm.mma.mma_sync.present);  // no section: the dense rate
}

TEST(DeviceLoader, BadMmaFlavourKeysNameFileLineAndPath) {
  const fs::path tmp = fs::temp_directory_path() / "attnsim_bad_mma.yaml";
  std::ifstream in(std::string(ATTNSIM_SOURCE_DIR) + "/configs/devices/teaching.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text += "  mma:\n"
          "    mma_snyc:\n"                 // line +2: unknown flavour
          "      flops_per_cycle: 512\n"
          "    wgmma:\n"
          "      flops_per_cycle: 4096\n"   // above the dense peak (1024)
          "      latency_cycles: 10\n"
          "      m: 64\n      n: 8\n      k: 16\n"
          "      issue_warps: 3\n"          // neither a warp nor a warp group
          "      fp8_scal: 2\n";            // unknown key
  const int base = static_cast<int>(std::count(text.begin(), text.end(), '\n')) - 10;  // line of "  mma:"
  std::ofstream(tmp) << text;
  try {
    load_device(tmp.string());
    FAIL() << "bad sm.mma accepted";
  } catch (const core::ConfigError& e) {
    const std::string m = e.what();
    const std::string f = tmp.string() + ":";
    EXPECT_NE(m.find(f + std::to_string(base + 1) + ": sm.mma.mma_snyc: unknown key (did you mean 'mma_sync'?)"),
              std::string::npos) << m;
    EXPECT_NE(m.find(f + std::to_string(base + 4) + ": sm.mma.wgmma.flops_per_cycle: exceeds sm.tensor_flops_per_cycle"),
              std::string::npos) << m;
    EXPECT_NE(m.find(f + std::to_string(base + 9) + ": sm.mma.wgmma.issue_warps: must be 1"), std::string::npos) << m;
    EXPECT_NE(m.find(f + std::to_string(base + 10) + ": sm.mma.wgmma.fp8_scal: unknown key (did you mean 'fp8_scale'?)"),
              std::string::npos) << m;
  }
  fs::remove(tmp);
}

TEST(DeviceLoader, MmaFlavourNeedsItsRateAndShape) {
  try {
    load_device("h200", {{"sm.mma.tcgen05.flops_per_cycle", "8192"}});
    FAIL();
  } catch (const core::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("sm.mma.tcgen05.latency_cycles: missing required key"), std::string::npos) << m;
    EXPECT_NE(m.find("exceeds sm.tensor_flops_per_cycle"), std::string::npos) << m;
  }
  EXPECT_EQ(load_device("h200", {{"sm.mma.mma_sync.flops_per_cycle", "2048"}}).sm.mma.mma_sync.flops_per_cycle, 2048.0);
}

TEST(DeviceLoader, MissingFileIsConfigError) {
  EXPECT_THROW(load_device("/nonexistent/dev.yaml"), core::ConfigError);
}

TEST(DeviceLoader, ConfigDirEnvironmentTakesPrecedence) {
  const fs::path dir = fs::temp_directory_path() / "attnsim_cfgdir_test";
  fs::create_directories(dir / "devices");
  std::string text = device_to_yaml(load_device("teaching"));
  text.replace(text.find("name: \"teaching\""), 16, "name: \"mine\"");
  std::ofstream(dir / "devices" / "teaching.yaml") << text;
  setenv("ATTNSIM_CONFIG_DIR", dir.c_str(), 1);
  const auto d = load_device("teaching");
  unsetenv("ATTNSIM_CONFIG_DIR");
  fs::remove_all(dir);
  EXPECT_EQ(d.name, "mine");
}

TEST(DeviceLoader, EveryPresetNumberCarriesASourceComment) {
  for (const char* name : kPresets) {
    std::ifstream in(std::string(ATTNSIM_SOURCE_DIR) + "/configs/devices/" + name + ".yaml");
    ASSERT_TRUE(in.good()) << name;
    std::string line, previous;
    int n = 0;
    for (; std::getline(in, line); previous = line) {
      ++n;
      const auto colon = line.find(':');
      if (line.empty() || line.find_first_not_of(' ') == std::string::npos || line[line.find_first_not_of(' ')] == '#')
        continue;
      const std::string value = line.substr(colon + 1);
      const bool is_section = value.find_first_not_of(' ') == std::string::npos;
      if (is_section || line.rfind("name:", 0) == 0) continue;
      const bool commented_above = previous.find_first_not_of(' ') != std::string::npos &&
                                   previous[previous.find_first_not_of(' ')] == '#';
      EXPECT_TRUE(line.find('#') != std::string::npos || commented_above) << name << ".yaml:" << n << " has no source comment";
    }
  }
}

}  // namespace
}  // namespace attnsim::config
