// The kernel registry: one descriptor per kernel, names unique; the workload keys a kernel
// names are workload keys (listed once, core::workload_keys()); the loaders accept every
// registered kernel and every workload key.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "kernels/registry.h"
#include "tests/kernels/test_device.h"
#include "sim/config/workload_loader.h"
#include "sim/core/workload.h"
#include "sim/io/workload_fields.h"

namespace attnsim::kernels {
namespace {

bool is_workload_key(std::string_view k) {
  const auto& keys = core::workload_keys();
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

TEST(KernelRegistry, NamesAreUniqueAndFound) {
  std::set<std::string> seen;
  for (const KernelEntry& e : kernel_registry()) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name;
    EXPECT_EQ(find_kernel(e.name), &e);
    EXPECT_NE(e.make, nullptr) << e.name;
  }
  EXPECT_EQ(find_kernel("no_such_kernel"), nullptr);
  EXPECT_EQ(config::known_kernel_names(), kernel_names());
}

TEST(KernelRegistry, EntryKeysAreWorkloadKeys) {
  for (const KernelEntry& e : kernel_registry()) {
    EXPECT_FALSE(e.keys.empty()) << e.name;
    for (std::string_view k : e.keys) EXPECT_TRUE(is_workload_key(k)) << e.name << ": " << k;
  }
}

TEST(KernelRegistry, OutputFieldsAreWorkloadKeys) {
  for (const io::Field& f : io::workload_fields(core::Workload{})) EXPECT_TRUE(is_workload_key(f.name)) << f.name;
}

TEST(KernelRegistry, EveryKernelAndKeyLoads) {
  for (const KernelEntry& e : kernel_registry()) {
    const core::Workload w = config::workload_for_kernel(e.name);
    EXPECT_EQ(w.kernel, e.name);
  }
  // Each key is known to the loader: setting it to a valid value for flash2 raises nothing
  // about an unknown key (a value out of range names the key; a key the loader does not know is
  // reported as "unknown key").
  for (std::string_view k : core::workload_keys()) {
    if (k == "kernel") continue;
    try {
      config::workload_for_kernel("flash2", {{std::string(k), "1"}});
    } catch (const core::ConfigError& err) {
      EXPECT_EQ(std::string(err.what()).find("unknown key"), std::string::npos) << k << ": " << err.what();
    }
  }
}

TEST(KernelRegistry, ClosedFormsMatchTheEntry) {
  for (const KernelEntry& e : kernel_registry()) {
    core::Workload w;
    w.kernel = e.name;
    w.batch = w.heads = w.kv_heads = 1;
    w.seq_q = w.seq_kv = 64;
    w.head_dim = 16;
    w.block_m = w.block_n = w.block_k = 32;
    w.num_splits = 2;
    EXPECT_EQ(closed_form_traffic(w).empty(), e.closed_form == nullptr) << e.name;
  }
}

// A launch no SM can hold is refused when the program is built (so `sweep --dry-run` calls the
// point impossible, as the sweep does), naming the workload key that sized it.
TEST(KernelRegistry, LaunchesNoSmCanHoldAreRefusedNamingTheKeyThatSizedThem) {
  const core::DeviceSpec gpu = testing::small_gpu();
  auto refusal = [&](const std::vector<std::pair<std::string, std::string>>& keys) -> core::ConfigProblem {
    std::vector<config::Override> set = {{"seq", "256"}, {"head_dim", "64"}};
    for (const auto& [k, v] : keys) set.push_back({k, v});
    try {
      make_program(config::workload_for_kernel("flash2", set), gpu);
    } catch (const core::ConfigError& err) {
      return err.problems().front();
    }
    return {};
  };
  EXPECT_EQ(refusal({{"warps", "4"}}).key_path, "");  // 128 threads x 72 registers fit
  const core::ConfigProblem regs = refusal({{"warps", "32"}});  // 1024 x 72 > 65,536
  EXPECT_EQ(regs.key_path, "warps");
  EXPECT_NE(regs.message.find("launch 'flash2_fwd': 32 warps (1024 threads) x 72 registers per thread exceed the "
                              "65536 registers one block may use on 'test-gpu'"),
            std::string::npos)
      << regs.message;
  const core::ConfigProblem threads = refusal({{"warps", "33"}});
  EXPECT_EQ(threads.key_path, "warps");
  EXPECT_NE(threads.message.find("1056 threads) exceed the 1024 threads a block may have"), std::string::npos)
      << threads.message;
  const core::ConfigProblem per_thread = refusal({{"regs_per_thread", "300"}});
  EXPECT_EQ(per_thread.key_path, "regs_per_thread");
  EXPECT_NE(per_thread.message.find("300 registers per thread exceed the device limit of 255"), std::string::npos)
      << per_thread.message;
}

}  // namespace
}  // namespace attnsim::kernels
