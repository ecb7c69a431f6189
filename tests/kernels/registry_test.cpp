// The kernel registry: one descriptor per kernel, names unique; the workload keys a kernel
// names are workload keys (listed once, core::workload_keys()); the loaders accept every
// registered kernel and every workload key.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "kernels/registry.h"
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

}  // namespace
}  // namespace attnsim::kernels
