// Replays every committed fuzz seed (fuzz/corpus/<target>/) and every saved crasher
// (tests/data/fuzz-regressions/<target>/) through the fuzz targets' code path in a normal build:
// each input must end in success or core::ConfigError, never another exception or a crash.
// A crasher whose fix is still pending is kept as "open-<name>" and only listed, not replayed
// (rename it when the fix lands; tests/data/fuzz-regressions/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "fuzz/fuzz_targets.h"

namespace attnsim::fuzz {
namespace {

namespace fs = std::filesystem;

// Runs `target` on each input file of `name`; returns how many inputs there were.
int replay(const std::string& name, void (*target)(const std::string&)) {
  int count = 0;
  for (const fs::path& dir : {fs::path(ATTNSIM_SOURCE_DIR) / "fuzz/corpus" / name,
                             fs::path(ATTNSIM_TEST_DATA) / "fuzz-regressions" / name}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
      if (e.path().filename().string().rfind("open-", 0) == 0) {
        std::cerr << "open fuzz finding, not replayed until fixed: " << e.path() << "\n";
        continue;
      }
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      ++count;
      try {
        target(text.str());
      } catch (const std::exception& ex) {
        ADD_FAILURE() << e.path() << ": unexpected exception: " << ex.what();
      } catch (...) {
        ADD_FAILURE() << e.path() << ": unexpected non-standard exception";
      }
    }
  }
  return count;
}

TEST(FuzzRegression, DeviceYamlInputsEndInSuccessOrConfigError) {
  EXPECT_GT(replay("fuzz_device_yaml", device_yaml), 0);
}

TEST(FuzzRegression, WorkloadYamlInputsEndInSuccessOrConfigError) {
  EXPECT_GT(replay("fuzz_workload_yaml", workload_yaml), 0);
}

TEST(FuzzRegression, SweepInputsEndInSuccessOrConfigError) { EXPECT_GT(replay("fuzz_sweep", sweep), 0); }

TEST(FuzzRegression, SetOverrideInputsEndInSuccessOrConfigError) {
  EXPECT_GT(replay("fuzz_set_overrides", set_overrides), 0);
}

TEST(FuzzRegression, NcuCsvInputsEndInSuccessOrConfigError) { EXPECT_GT(replay("fuzz_ncu_csv", ncu_csv), 0); }

}  // namespace
}  // namespace attnsim::fuzz
