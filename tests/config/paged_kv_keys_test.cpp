// The paged-KV workload keys (page_size, page_placement, page_seed, kv_lengths): the three
// shapes of kv_lengths, the cache capacity they imply, and every error with file:line: key.path.
#include <gtest/gtest.h>

#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_loader.h"
#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"
#include "sweep_errors.h"

namespace attnsim::config {
namespace {

core::Workload parse(const std::string& text) { return testing::parse_workload_text(text, "w.yaml"); }
std::string error_of(const std::string& text) { return testing::workload_error_of(text, "w.yaml"); }

const std::string kDecode = "kernel: flash_decode\nbatch: 3\nseq_q: 1\n";

TEST(PagedKvKeys, DefaultsAreTheContiguousCacheOfSeqKv) {
  const core::Workload w = parse(kDecode + "seq_kv: 500\n");
  EXPECT_EQ(w.page_size, 0u);
  EXPECT_EQ(w.page_placement, core::PagePlacement::kContiguous);
  EXPECT_EQ(core::sequence_kv_lengths(w), (std::vector<std::uint64_t>{500, 500, 500}));
  EXPECT_EQ(core::to_string(w.kv_lengths), "");
}

TEST(PagedKvKeys, ThreeShapesOfKvLengths) {
  const core::Workload fixed = parse(kDecode + "kv_lengths: 700\n");
  EXPECT_EQ(fixed.seq_kv, 700u);  // the capacity defaults to the longest length
  EXPECT_EQ(core::sequence_kv_lengths(fixed), (std::vector<std::uint64_t>{700, 700, 700}));
  const core::Workload list = parse(kDecode + "kv_lengths: [100, 2000, 37]\npage_size: 16\n");
  EXPECT_EQ(list.seq_kv, 2000u);
  EXPECT_EQ(core::sequence_kv_lengths(list), (std::vector<std::uint64_t>{100, 2000, 37}));
  EXPECT_EQ(list.page_size, 16u);
  const core::Workload uni = parse(kDecode + "seq_kv: 4096\nkv_lengths: {uniform: [64, 4096], seed: 9}\n");
  EXPECT_EQ(uni.seq_kv, 4096u);
  const auto drawn = core::sequence_kv_lengths(uni);
  ASSERT_EQ(drawn.size(), 3u);
  for (auto n : drawn) {
    EXPECT_GE(n, 64u);
    EXPECT_LE(n, 4096u);
  }
  EXPECT_EQ(drawn, core::sequence_kv_lengths(parse(kDecode + "kv_lengths: {uniform: [64, 4096], seed: 9}\n")));
  EXPECT_NE(drawn, core::sequence_kv_lengths(parse(kDecode + "kv_lengths: {uniform: [64, 4096], seed: 10}\n")));
}

TEST(PagedKvKeys, ResolvedYamlReadsBackToTheSameCache) {
  for (const char* extra : {"kv_lengths: [100, 2000, 37]\npage_size: 16\npage_placement: shuffled\npage_seed: 4\n",
                            "kv_lengths: {uniform: [64, 4096], seed: 9}\npage_size: 1\n", "kv_lengths: 33\n"}) {
    const core::Workload w = parse(kDecode + extra);
    const core::Workload back = parse(workload_to_yaml(w));
    EXPECT_EQ(core::sequence_kv_lengths(back), core::sequence_kv_lengths(w)) << extra;
    EXPECT_EQ(back.page_size, w.page_size) << extra;
    EXPECT_EQ(back.page_placement, w.page_placement) << extra;
    EXPECT_EQ(back.page_seed, w.page_seed) << extra;
    EXPECT_EQ(back.seq_kv, w.seq_kv) << extra;
  }
}

TEST(PagedKvKeys, ErrorsNameFileLineAndKeyPath) {
  EXPECT_NE(error_of(kDecode + "kv_lengths: [100, 0, 7]\n").find("w.yaml:4: kv_lengths[1]: expected a positive integer, got 0"),
            std::string::npos);
  EXPECT_NE(error_of(kDecode + "kv_lengths: [1, 2]\n").find("w.yaml:4: kv_lengths: lists 2 lengths for batch 3"),
            std::string::npos);
  EXPECT_NE(error_of(kDecode + "kv_lengths: {uniform: [500, 100]}\n")
                .find("w.yaml:4: kv_lengths.uniform: min (500) is larger than max (100)"),
            std::string::npos);
  EXPECT_NE(error_of(kDecode + "kv_lengths:\n  uniform: [1, 9]\n  sed: 3\n")
                .find("w.yaml:6: kv_lengths.sed: unknown key (did you mean 'seed'?)"),
            std::string::npos);
  EXPECT_NE(error_of(kDecode + "kv_lengths: {seed: 3}\n").find("w.yaml:4: kv_lengths.uniform: missing required key"),
            std::string::npos);
  EXPECT_NE(error_of(kDecode + "kv_lengths: {uniform: 5}\n").find("w.yaml:4: kv_lengths.uniform: expected [min, max]"),
            std::string::npos);
  EXPECT_NE(error_of(kDecode + "seq_kv: 4096\nkv_lengths: 5000\n")
                .find("w.yaml:5: kv_lengths: the longest length (5000) exceeds seq_kv (4096)"),
            std::string::npos);
  EXPECT_EQ(error_of(kDecode + "page_placement: shuffled\n"), "");  // no effect without pages (page_size 0)
  EXPECT_NE(error_of(kDecode + "page_size: 8\npage_placement: random\n")
                .find("w.yaml:5: page_placement: unknown value 'random' (known: contiguous, shuffled)"),
            std::string::npos);
  EXPECT_NE(error_of("kernel: flash2\npage_size: 16\n").find("w.yaml:2: page_size: is read by flash_decode only"),
            std::string::npos);
  EXPECT_NE(error_of("kernel: flash2\nkv_lengths: [5]\n").find("w.yaml:2: kv_lengths: is read by flash_decode only"),
            std::string::npos);
  EXPECT_EQ(error_of("kernel: flash2\npage_size: 0\n"), "");  // 0 is the contiguous cache: allowed anywhere
}

// A sweep's base may hold the kv_lengths mapping; page_size is a scalar axis.
TEST(PagedKvKeys, SweepBaseHoldsTheDistribution) {
  const SweepSpec spec = SweepLoader::load_text(
      "name: p\ndevice: h200\nbase:\n  kernel: flash_decode\n  batch: 4\n  seq_q: 1\n"
      "  kv_lengths: {uniform: [10, 99], seed: 2}\n  page_placement: shuffled\naxes:\n  page_size: [1, 16]\n",
      "s.yaml");
  EXPECT_EQ(spec.name, "p");
  EXPECT_NO_THROW(SweepLoader::load_text(  // page_size 0 (the contiguous cache) next to a placement
      "name: p\ndevice: h200\nbase:\n  kernel: flash_decode\n  page_placement: shuffled\naxes:\n  page_size: [0, 4]\n",
      "s.yaml"));
  try {
    SweepLoader::load_text("name: p\ndevice: h200\nbase:\n  kernel: flash_decode\n  batch: 4\n  seq_q: 1\n"
                           "  kv_lengths: {uniform: [10, 99], sed: 2}\naxes:\n  page_size: [1, 16]\n",
                           "s.yaml");
    ADD_FAILURE() << "a misspelt key in base.kv_lengths loads";
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:7: base.kv_lengths.sed: unknown key"), std::string::npos) << e.what();
  }
}

// kv_lengths may be an axis of lists and distributions as well as lengths: each point reads the
// cache its value describes, and a bad value names its place in the axis.
TEST(PagedKvKeys, SweepAxisTakesListsAndDistributions) {
  const std::string head = "name: p\ndevice: h200\nbase:\n  kernel: flash_decode\n  batch: 3\n  seq_q: 1\n"
                           "  seq_kv: 4096\naxes:\n  kv_lengths: ";
  const SweepSpec spec = SweepLoader::load_text(
      head + "[700, [100, 2000, 37], {uniform: [64, 4096], seed: 9}, \"{uniform: [64, 4096], seed: 10}\"]\n", "s.yaml");
  const SweepExpander x(spec);
  ASSERT_EQ(x.size(), 4u);
  const std::string same = kDecode + "seq_kv: 4096\nkv_lengths: ";
  for (const auto& [i, text] : std::vector<std::pair<std::uint64_t, std::string>>{
           {0, "700"}, {1, "[100, 2000, 37]"}, {2, "{uniform: [64, 4096], seed: 9}"}, {3, "{uniform: [64, 4096], seed: 10}"}}) {
    const SweepPoint p = x.point(i);
    ASSERT_TRUE(p.possible) << i << ": " << p.reason;
    EXPECT_EQ(core::sequence_kv_lengths(p.workload), core::sequence_kv_lengths(parse(same + text + "\n"))) << text;
    EXPECT_EQ(core::to_string(p.workload.kv_lengths), text) << i;
  }
  EXPECT_NE(core::sequence_kv_lengths(x.point(2).workload), core::sequence_kv_lengths(x.point(3).workload));
  const std::string err = testing::error_of(head + "[700, {uniform: [500, 100]}, [1, 0, 3], {uniform: [1, 9], sed: 1}]\n");
  EXPECT_NE(err.find("s.yaml:9: axes.kv_lengths[1].uniform: min (500) is larger than max (100)"), std::string::npos) << err;
  EXPECT_NE(err.find("s.yaml:9: axes.kv_lengths[2][1]: expected a positive integer, got 0"), std::string::npos) << err;
  EXPECT_NE(err.find("s.yaml:9: axes.kv_lengths[3].sed: unknown key (did you mean 'seed'?)"), std::string::npos) << err;
  // Other keys stay scalar.
  EXPECT_NE(testing::error_of(head + "[700]\n  page_size: [[16], 32]\n").find("axes.page_size[0]: expected a scalar value, got a list"),
            std::string::npos);
}

}  // namespace
}  // namespace attnsim::config
