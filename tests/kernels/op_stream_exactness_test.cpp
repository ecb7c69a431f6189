// Op stream (TrafficCounter) vs core's closed forms, on a grid of small shapes and tiles with
// ragged blocks, causal, GQA/MQA, both passes and several dtypes: 0 bytes difference.
#include <gtest/gtest.h>

#include <sstream>

#include "kernels/registry.h"
#include "sim/core/io_counts.h"
#include "sim/core/traffic_counter.h"
#include "test_device.h"

namespace attnsim::kernels {
namespace {

using core::Workload;

std::string describe(const Workload& w) {
  std::ostringstream s;
  s << w.kernel << " B" << w.batch << " H" << w.heads << "/" << w.kv_heads << " Nq" << w.seq_q << " Nkv" << w.seq_kv
    << " d" << w.head_dim << " " << core::to_string(w.dtype) << (w.causal ? " causal" : "") << " "
    << core::to_string(w.pass) << " bm" << w.block_m << " bn" << w.block_n << " bk" << w.block_k << " st"
    << w.stages << " splits" << w.num_splits;
  return s.str();
}

// Returns the number of mismatching (launch, tensor) entries, reporting each.
int compare(const std::vector<core::LaunchTraffic>& got, const std::vector<core::LaunchTraffic>& want,
            const Workload& w, const char* what) {
  if (got.size() != want.size()) {
    ADD_FAILURE() << what << ": " << got.size() << " launches vs " << want.size() << " in " << describe(w);
    return 1;
  }
  int bad = 0;
  for (std::size_t l = 0; l < got.size(); ++l) {
    if (got[l].kernel_name != want[l].kernel_name) {
      ADD_FAILURE() << what << ": launch " << l << " named " << got[l].kernel_name << " vs " << want[l].kernel_name;
      ++bad;
    }
    for (std::size_t t = 0; t < core::kNumTensors; ++t) {
      const auto& g = got[l].traffic.by_tensor[t];
      const auto& e = want[l].traffic.by_tensor[t];
      if (g == e) continue;
      if (++bad <= 5)
        ADD_FAILURE() << what << ": " << got[l].kernel_name << " " << core::to_string(static_cast<core::Tensor>(t))
                      << " read " << g.read << " vs " << e.read << ", write " << g.write << " vs " << e.write
                      << " in " << describe(w);
    }
  }
  return bad;
}

struct SeqPair {
  std::uint64_t q, kv;
};

// Runs `check` on every point of the grid for `kernel`; returns the number of points.
template <typename Check>
int for_grid(const std::string& kernel, Check check) {
  const SeqPair seqs[] = {{64, 64}, {100, 100}, {128, 128}, {100, 128}, {37, 100}};
  const std::uint64_t dims[] = {16, 32};
  const std::uint64_t blocks[] = {16, 32, 64};
  const std::uint64_t kv_heads[] = {4, 2, 1};
  int points = 0;
  for (const auto& s : seqs)
    for (auto d : dims)
      for (auto bm : blocks)
        for (auto bn : blocks)
          for (auto kvh : kv_heads)
            for (bool causal : {false, true})
              for (auto pass : {core::Pass::kFwd, core::Pass::kFwdBwd}) {
                if (pass == core::Pass::kFwdBwd && kernel == "flash_decode") continue;
                Workload w;
                w.kernel = kernel;
                w.batch = 2;
                w.heads = 4;
                w.kv_heads = kvh;
                w.seq_q = s.q;
                w.seq_kv = s.kv;
                w.head_dim = d;
                w.causal = causal;
                w.pass = pass;
                w.block_m = bm;
                w.block_n = bn;
                w.block_k = bn == 64 ? 32 : 16;
                w.dtype = (bm + bn + kvh) % 3 == 0 ? core::DType::kFp32 : core::DType::kFp16;
                w.stages = static_cast<std::uint32_t>(1 + (bm / 16 + kvh) % 3);
                check(w);
                ++points;
              }
  return points;
}

// gemm_cluster: 0 = the device's default (1 on the test GPU), 2 = standard's GEMMs in 2-CTA
// clusters that load the shared operand tile once per pair.
void expect_exact(const std::string& kernel, std::uint32_t gemm_cluster = 0) {
  int mismatches = 0;
  const int points = for_grid(kernel, [&](Workload w) {
    w.gemm_cluster = gemm_cluster;
    const core::TileProgram p = make_program(w, testing::small_gpu());
    mismatches += compare(core::TrafficCounter::count(p), kernels::closed_form_traffic(p.workload), p.workload,
                          "all accesses");
  });
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(points, 500);
}

// Distinct-byte counting is costlier: every third grid point (all variants still covered).
void expect_compulsory(const std::string& kernel, std::uint32_t gemm_cluster = 0) {
  int mismatches = 0, index = 0;
  for_grid(kernel, [&](Workload w) {
    if (index++ % 3 != 0) return;
    w.gemm_cluster = gemm_cluster;
    const core::TileProgram p = make_program(w, testing::small_gpu());
    mismatches += compare(core::TrafficCounter::count_distinct(p), kernels::compulsory_traffic(p.workload), p.workload,
                          "distinct bytes");
  });
  EXPECT_EQ(mismatches, 0);
}

TEST(OpStreamExactness, StandardMatchesClosedForms) { expect_exact("standard"); }
TEST(OpStreamExactness, StandardInTwoCtaClustersMatchesClosedForms) { expect_exact("standard", 2); }
TEST(OpStreamExactness, StandardInTwoCtaClustersDistinctBytesMatchCompulsory) { expect_compulsory("standard", 2); }
TEST(OpStreamExactness, Flash1MatchesClosedForms) { expect_exact("flash1"); }
TEST(OpStreamExactness, Flash2MatchesClosedForms) { expect_exact("flash2"); }
TEST(OpStreamExactness, StandardDistinctBytesMatchCompulsory) { expect_compulsory("standard"); }
TEST(OpStreamExactness, Flash1DistinctBytesMatchCompulsory) { expect_compulsory("flash1"); }
TEST(OpStreamExactness, Flash2DistinctBytesMatchCompulsory) { expect_compulsory("flash2"); }

TEST(OpStreamExactness, FlashDecodeMatchesClosedFormsAndCompulsory) {
  int mismatches = 0, points = 0;
  for (std::uint64_t nq : {1, 4})
    for (std::uint64_t nkv : {64, 100, 128, 1000})
      for (std::uint64_t kvh : {4, 2, 1})
        for (std::uint64_t splits : {0, 1, 3, 7})
          for (std::uint64_t bn : {16, 64})
            for (bool causal : {false, true}) {
              Workload w;
              w.kernel = "flash_decode";
              w.batch = 2;
              w.heads = 4;
              w.kv_heads = kvh;
              w.seq_q = nq;
              w.seq_kv = nkv;
              w.head_dim = 32;
              w.block_n = bn;
              w.num_splits = splits;
              w.causal = causal;
              const core::TileProgram p = make_program(w, testing::small_gpu());
              mismatches += compare(core::TrafficCounter::count(p), kernels::closed_form_traffic(p.workload), p.workload,
                                    "all accesses");
              mismatches += compare(core::TrafficCounter::count_distinct(p), kernels::compulsory_traffic(p.workload),
                                    p.workload, "distinct bytes");
              ++points;
            }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(points, 2 * 4 * 3 * 4 * 2 * 2);
}

}  // namespace
}  // namespace attnsim::kernels
