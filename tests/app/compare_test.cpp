// attnsim compare: the simulated-results reader, measured/simulated matching, error statistics
// and the CLI, against HDF5 fixtures built here in the results layout (docs/hdf5-schema.md):
// /points/<i>{status attr, config YAML, kernels/<k>_<name>{name attr, metrics (name, value)}}.
#include <H5Cpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/commands.h"
#include "sim/app/compare_matcher.h"
#include "sim/app/compare_report.h"
#include "sim/app/compare_simulated_reader.h"
#include "sim/core/errors.h"
#include "sim/io/ncu_csv_reader.h"
#include "tests/io/special_files.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

const std::string kNcuDir = std::string(ATTNSIM_TEST_DATA) + "/ncu";
const std::string kExcerpt = kNcuDir + "/reference_excerpt.csv";

struct FixtureKernel {
  std::string name;
  std::vector<std::pair<std::string, double>> metrics;
};
struct FixturePoint {
  std::string config;  // YAML
  std::vector<FixtureKernel> kernels;
  std::string status = "ok";
};

fs::path temp_dir() { return fs::temp_directory_path() / ("attnsim_compare_test_" + std::to_string(::getpid())); }

std::string temp_path(const std::string& name) {
  fs::create_directories(temp_dir());
  return (temp_dir() / name).string();
}

// Removes this process's fixture folder after the last test.
class TempDirCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(temp_dir(), ec);
  }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new TempDirCleanup);

std::string workload_yaml(const std::string& kernel, int batch, int heads, int seq_q, int seq_kv, int head_dim,
                          int block_m = 0) {
  std::ostringstream s;
  s << "kernel: \"" << kernel << "\"\nbatch: " << batch << "\nheads: " << heads << "\nkv_heads: " << heads
    << "\nseq_q: " << seq_q << "\nseq_kv: " << seq_kv << "\nhead_dim: " << head_dim
    << "\ndtype: \"fp16\"\ncausal: false\npass: \"fwd\"\nblock_m: " << block_m
    << "\nblock_n: 0\nwarps: 0\nstages: 0\ncta_order: \"row-major\"\ndevice: \"h200\"\n";
  return s.str();
}

struct MetricRow {
  const char* name;
  double value;
};

void write_fixture(const std::string& path, const std::vector<FixturePoint>& points) {
  H5::StrType str(H5::PredType::C_S1, H5T_VARIABLE);
  H5::H5File f(path, H5F_ACC_TRUNC);
  H5::Group pg = f.createGroup("points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    H5::Group g = pg.createGroup(std::to_string(i));
    H5::Attribute a = g.createAttribute("status", str, H5::DataSpace(H5S_SCALAR));
    a.write(str, points[i].status);
    H5::DataSet cfg = g.createDataSet("config", str, H5::DataSpace(H5S_SCALAR));
    cfg.write(points[i].config, str);
    if (points[i].status != "ok") continue;
    H5::Group kg = g.createGroup("kernels");
    for (std::size_t k = 0; k < points[i].kernels.size(); ++k) {
      const FixtureKernel& fk = points[i].kernels[k];
      H5::Group kernel = kg.createGroup(std::to_string(k) + "_" + fk.name);
      H5::Attribute na = kernel.createAttribute("name", str, H5::DataSpace(H5S_SCALAR));
      na.write(str, fk.name);
      H5::CompType t(sizeof(MetricRow));
      t.insertMember("name", HOFFSET(MetricRow, name), str);
      t.insertMember("value", HOFFSET(MetricRow, value), H5::PredType::NATIVE_DOUBLE);
      std::vector<MetricRow> rows;
      for (const auto& [n, v] : fk.metrics) rows.push_back({n.c_str(), v});
      const hsize_t n = rows.size();
      H5::DataSet d = kernel.createDataSet("metrics", t, H5::DataSpace(1, &n));
      if (n) d.write(rows.data(), t);
    }
  }
}

// Simulated counterparts of reference_excerpt.csv (rows 2-5 and the N=4096 decode row of
// kernels.csv). DRAM read is the measured value x 1.05 (so +5 %), time x 0.85 (-15 %), the
// occupancy register limit equal.
std::vector<FixturePoint> excerpt_points(bool with_decode_flash2 = true) {
  std::vector<FixturePoint> p;
  p.push_back({workload_yaml("standard", 1, 32, 1024, 1024, 128),
               {{"gemm_qk", {{"dram__bytes_read.sum", 16801792 * 1.05}, {"gpu__time_duration.sum", 25120 * 0.85},
                             {"launch__occupancy_limit_registers", 1}}},
                {"softmax", {{"dram__bytes_read.sum", 67142912 * 1.05}, {"gpu__time_duration.sum", 54688 * 0.85},
                             {"launch__occupancy_limit_registers", 10}}},
                {"gemm_pv", {{"dram__bytes_read.sum", 75521536 * 1.05}, {"gpu__time_duration.sum", 23872 * 0.85},
                             {"launch__occupancy_limit_registers", 1}}}}});
  p.push_back({workload_yaml("flash2", 1, 32, 1024, 1024, 128),
               {{"flash2_fwd", {{"dram__bytes_read.sum", 25222912 * 1.05}, {"gpu__time_duration.sum", 56128 * 0.85},
                                {"launch__occupancy_limit_registers", 2}}}}});
  p.push_back({workload_yaml("standard", 1, 32, 2048, 2048, 128), {{"gemm_qk", {}}, {"softmax", {}}, {"gemm_pv", {}}}});
  p.push_back({workload_yaml(with_decode_flash2 ? "flash2" : "flash_decode", 8, 32, 1, 4096, 128),
               {{"flash2_fwd", {{"dram__bytes_read.sum", 537008896 * 1.05}, {"gpu__time_duration.sum", 203872 * 0.85},
                                {"launch__occupancy_limit_registers", 2}}}}});
  p.push_back({workload_yaml("flash2", 1, 32, 8192, 8192, 128), {}, "impossible"});
  return p;
}

std::vector<SimulatedPoint> read_fixture(const std::string& name, const std::vector<FixturePoint>& points) {
  const std::string path = temp_path(name);
  write_fixture(path, points);
  return CompareSimulatedReader::read(path);
}

int run(const std::vector<std::string>& argv, std::string* out_text = nullptr, std::string* err_text = nullptr) {
  std::ostringstream out, err;
  const int rc = run_cli(argv, out, err);
  if (out_text) *out_text = out.str();
  if (err_text) *err_text = err.str();
  return rc;
}

TEST(CompareSimulatedReader, ReadsConfigAndKernelMetricsOfOkPoints) {
  const auto points = read_fixture("reader.h5", excerpt_points());
  ASSERT_EQ(points.size(), 4u);  // the "impossible" point is skipped
  EXPECT_EQ(points[0].value("kernel"), "standard");
  EXPECT_EQ(points[0].count("seq_kv"), 1024u);
  EXPECT_EQ(points[0].value("device"), "h200");
  ASSERT_EQ(points[0].kernels.size(), 3u);
  EXPECT_EQ(points[0].kernels[1].index, 1u);
  EXPECT_EQ(points[0].kernels[1].name, "softmax");
  EXPECT_DOUBLE_EQ(points[0].kernels[1].metrics.at("launch__occupancy_limit_registers"), 10);
}

TEST(CompareSimulatedReader, NestedWorkloadConfigIsFlattened) {
  const auto cfg = CompareSimulatedReader::parse_config("workload:\n  kernel: flash2\n  seq_q: 64\ndevice:\n  name: h200\n");
  EXPECT_EQ(cfg.at("kernel"), "flash2");
  EXPECT_EQ(cfg.at("seq_q"), "64");
  EXPECT_EQ(cfg.at("device"), "h200");
}

TEST(CompareSimulatedReader, CsvGivenAsSimulatedFileIsConfigError) {
  EXPECT_THROW(CompareSimulatedReader::read(kExcerpt), core::ConfigError);
}

TEST(CompareMatcher, MatchesByShapeAndLaunchOrder) {
  const auto measured = io::NcuCsvReader::read_file(kExcerpt);
  const auto points = read_fixture("match.h5", excerpt_points());
  const MatchResult r = CompareMatcher::match(measured, points);
  EXPECT_TRUE(r.unmatched.empty());
  ASSERT_EQ(r.matches.size(), 5u);
  // std kernels 0,1,2 -> point 0 kernels 0,1,2; sdpa_flash -> point 1; decode -> point 3.
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(r.matches[k].point, 0u);
    EXPECT_EQ(r.matches[k].kernel, k);
  }
  EXPECT_EQ(r.matches[3].point, 1u);
  EXPECT_EQ(r.matches[4].point, 3u);
}

TEST(CompareMatcher, DecodeRowFallsBackToFlashDecode) {
  const auto measured = io::NcuCsvReader::read_file(kExcerpt);
  const auto points = read_fixture("decode.h5", excerpt_points(false));
  const MatchResult r = CompareMatcher::match(measured, points);
  ASSERT_EQ(r.matches.size(), 5u);
  EXPECT_EQ(points[r.matches[4].point].value("kernel"), "flash_decode");
}

TEST(CompareMatcher, MissingPointIsUnmatchedWithItsParameters) {
  const auto measured = io::NcuCsvReader::read_file(kExcerpt);
  auto fixture = excerpt_points();
  fixture.erase(fixture.begin() + 1);  // no flash2 N=1024 point
  const MatchResult r = CompareMatcher::match(measured, read_fixture("missing.h5", fixture));
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_EQ(r.unmatched[0].measured, 3u);
  EXPECT_NE(r.unmatched[0].reason.find("no simulated point with kernel=flash2 batch=1 heads=32"), std::string::npos)
      << r.unmatched[0].reason;
}

TEST(CompareMatcher, KernelIndexBeyondSimulatedLaunchesIsUnmatched) {
  const auto measured = io::NcuCsvReader::read_file(kExcerpt);
  auto fixture = excerpt_points();
  fixture[0].kernels.pop_back();  // standard point launches 2 kernels only
  const MatchResult r = CompareMatcher::match(measured, read_fixture("short.h5", fixture));
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_EQ(r.unmatched[0].measured, 2u);
  EXPECT_NE(r.unmatched[0].reason.find("none has index 2"), std::string::npos) << r.unmatched[0].reason;
}

TEST(CompareMatcher, TwoTileConfigsForAnUntiledMeasurementAreAmbiguous) {
  const auto measured = io::NcuCsvReader::read_file(kExcerpt);
  auto fixture = excerpt_points();
  fixture.push_back({workload_yaml("flash2", 1, 32, 1024, 1024, 128, 64), {{"flash2_fwd", {}}}});
  fixture[1].config = workload_yaml("flash2", 1, 32, 1024, 1024, 128, 128);
  const MatchResult r = CompareMatcher::match(measured, read_fixture("ambiguous.h5", fixture));
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_NE(r.unmatched[0].reason.find("ambiguous: simulated points 1, 5"), std::string::npos)
      << r.unmatched[0].reason;
}

TEST(CompareMatcher, MeasuredTileSizeSelectsThePoint) {
  const auto measured = io::NcuCsvReader::read_file(kNcuDir + "/measured_joined.csv");
  std::vector<FixturePoint> fixture = {
      {workload_yaml("flash2", 1, 32, 1024, 1024, 128, 64), {{"flash2_fwd", {}}}},
      {workload_yaml("flash2", 1, 32, 1024, 1024, 128, 128), {{"flash2_fwd", {}}}},
  };
  const MatchResult r = CompareMatcher::match(measured, read_fixture("tiles.h5", fixture));
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_EQ(r.matches[0].point, 1u);  // block_m = 128 row
  EXPECT_EQ(r.matches[1].point, 0u);  // block_m = 64 row
}

TEST(CompareMatcher, VariantNamingAnImplementationMatchesOnlyThatImpl) {
  auto measured = io::NcuCsvReader::read_file(kExcerpt);
  auto fixture = excerpt_points();
  // A Triton point of the same shape as the sdpa_flash (FA-2) row: the FA-2 row keeps matching
  // point 1 (no impl key: the default fa2), not the Triton one.
  fixture.push_back({workload_yaml("flash2", 1, 32, 1024, 1024, 128) + "impl: \"triton\"\n", {{"flash2_fwd", {}}}});
  const auto points = read_fixture("impl.h5", fixture);
  MatchResult r = CompareMatcher::match(measured, points);
  ASSERT_TRUE(r.unmatched.empty()) << r.unmatched[0].reason;
  EXPECT_EQ(r.matches[3].point, 1u);
  // The same row measured as Triton's kernel matches the Triton point.
  measured.kernels[3].workload.variant = "triton";
  r = CompareMatcher::match(measured, points);
  ASSERT_TRUE(r.unmatched.empty()) << r.unmatched[0].reason;
  EXPECT_EQ(points[r.matches[3].point].index, 5u);  // the fixture's sixth point (the impossible one is not read)
  EXPECT_EQ(points[r.matches[3].point].value("impl"), "triton");
}

TEST(CompareMatcher, UnknownVariantHasNoCandidateKernel) {
  io::MeasuredWorkload w;
  w.variant = "triton_fused";
  EXPECT_TRUE(CompareMatcher::candidate_kernels(w).empty());
  w.variant = "std";
  EXPECT_EQ(CompareMatcher::candidate_kernels(w), std::vector<std::string>{"standard"});
}

TEST(CompareReport, MedianOfEvenCountAveragesTheMiddlePair) {
  EXPECT_DOUBLE_EQ(CompareReport::median({0.3, 0.1, 0.2, 0.4}), 0.25);
  EXPECT_DOUBLE_EQ(CompareReport::median({5, 1, 3}), 3);
  EXPECT_TRUE(std::isnan(CompareReport::median({})));
}

TEST(CompareReport, SummaryOfHandComputedRows) {
  // |rel| = 0.1, 0.25, 0, 0 (0 vs 0) and undefined (0 vs 5): sorted 0, 0, 0.1, 0.25.
  auto row = [](const std::string& label, double m, double s) {
    MetricComparison c;
    c.label = label;
    c.measured = m;
    c.simulated = s;
    c.rel_error = m != 0 ? (s - m) / m : (s == 0 ? 0.0 : std::nan(""));
    return c;
  };
  const std::vector<MetricComparison> rows = {row("a", 100, 110), row("b", 200, 150), row("c", 50, 50),
                                              row("d", 0, 0), row("e", 0, 5)};
  const MetricSummary s = CompareReport::summarize("dram__bytes_read.sum", rows);
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.median_rel_error, 0.05);
  EXPECT_DOUBLE_EQ(s.worst_rel_error, 0.25);
  EXPECT_EQ(s.worst_where, "b kernel 0");
  EXPECT_DOUBLE_EQ(s.target, 0.10);
  EXPECT_TRUE(s.target_met);
}

TEST(CompareReport, SpearmanOfReversedOrderIsMinusOne) {
  EXPECT_DOUBLE_EQ(CompareReport::spearman({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0);
}

TEST(CompareReport, SpearmanGivesTiesTheirAverageRank) {
  // Ranks {1, 2.5, 2.5, 4} vs {1, 2, 3, 4}: cov 4.5, variances 4.5 and 5.
  EXPECT_NEAR(CompareReport::spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5), 1e-12);
}

TEST(CompareReport, TargetsFollowIssueSix) {
  EXPECT_DOUBLE_EQ(CompareReport::target_for("dram__bytes_write.sum"), 0.10);
  EXPECT_DOUBLE_EQ(CompareReport::target_for("lts__t_bytes.sum"), 0.20);
  EXPECT_DOUBLE_EQ(CompareReport::target_for("gpu__time_duration.sum"), 0.20);
  EXPECT_DOUBLE_EQ(CompareReport::target_for("launch__occupancy_limit_shared_mem"), 0.0);
  EXPECT_LT(CompareReport::target_for("sm__warps_active.avg.pct_of_peak_sustained_active"), 0.0);
}

TEST(CompareReport, RowsCarrySignedErrorsOfMetricsBothSidesHave) {
  const auto measured = io::NcuCsvReader::read_file(kExcerpt);
  const auto points = read_fixture("report.h5", excerpt_points());
  const CompareReport report(measured, points, CompareMatcher::match(measured, points));
  // 5 kernels x 3 shared metrics (DRAM read, time, register limit).
  ASSERT_EQ(report.rows().size(), 15u);
  const MetricComparison& dram = report.rows()[0];
  EXPECT_EQ(dram.metric, "dram__bytes_read.sum");
  EXPECT_DOUBLE_EQ(dram.measured, 16801792);
  EXPECT_NEAR(dram.abs_error, 840089.6, 1e-6);
  EXPECT_NEAR(dram.rel_error, 0.05, 1e-12);
  const MetricComparison& time = report.rows()[1];
  EXPECT_EQ(time.metric, "gpu__time_duration.sum");
  EXPECT_NEAR(time.rel_error, -0.15, 1e-12);
}

TEST(CompareReport, DramTotalIsReadPlusWriteWhereBothSidesHaveBothDirections) {
  const auto measured = io::NcuCsvReader::read_file(kExcerpt);
  auto fixture = excerpt_points();
  // QK^T of the first point also reports its writes: half the measured 39,866,368 B.
  fixture[0].kernels[0].metrics.emplace_back("dram__bytes_write.sum", 39866368 * 0.5);
  const auto points = read_fixture("dram_total.h5", fixture);
  const CompareReport report(measured, points, CompareMatcher::match(measured, points));
  std::vector<const MetricComparison*> totals;
  for (const auto& r : report.rows())
    if (r.metric == "dram__bytes.sum") totals.push_back(&r);
  ASSERT_EQ(totals.size(), 1u);  // only where both sides have both directions
  EXPECT_EQ(report.rows()[0].metric, "dram__bytes.sum");  // listed first
  EXPECT_DOUBLE_EQ(totals[0]->measured, 16801792.0 + 39866368.0);
  EXPECT_DOUBLE_EQ(totals[0]->simulated, 16801792 * 1.05 + 39866368 * 0.5);
  EXPECT_NEAR(totals[0]->rel_error, (16801792 * 0.05 - 39866368 * 0.5) / (16801792.0 + 39866368.0), 1e-12);
  EXPECT_DOUBLE_EQ(CompareReport::target_for("dram__bytes.sum"), 0.10);
}

TEST(CompareReport, SummaryAndRankingOverTheExcerpt) {
  const auto measured = io::NcuCsvReader::read_file(kExcerpt);
  const auto points = read_fixture("summary.h5", excerpt_points());
  const CompareReport report(measured, points, CompareMatcher::match(measured, points));
  ASSERT_EQ(report.summary().size(), 3u);
  EXPECT_NEAR(report.summary()[0].median_rel_error, 0.05, 1e-12);
  EXPECT_NEAR(report.summary()[1].median_rel_error, 0.15, 1e-12);
  EXPECT_DOUBLE_EQ(report.summary()[2].worst_rel_error, 0.0);
  // Every simulated time is the measured one x 0.85: same order.
  EXPECT_DOUBLE_EQ(report.time_rank_correlation(), 1.0);
}

TEST(CompareCli, UnmatchedKernelExitsTwoNamingItsLine) {
  auto fixture = excerpt_points();
  fixture.pop_back();
  fixture.pop_back();  // no decode point
  const std::string h5 = temp_path("cli_unmatched.h5");
  write_fixture(h5, fixture);
  std::string err;
  EXPECT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5}, nullptr, &err), 2);
  EXPECT_NE(err.find("reference_excerpt.csv:6: decode_B8Hq32Hkv32N4096d128/sdpa_flash kernel 0"),
            std::string::npos)
      << err;
}

TEST(CompareCli, AllowUnmatchedComparesTheRest) {
  auto fixture = excerpt_points();
  fixture.pop_back();
  fixture.pop_back();
  const std::string h5 = temp_path("cli_allow.h5");
  write_fixture(h5, fixture);
  std::string out;
  EXPECT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--allow-unmatched"}, &out), 0);
  EXPECT_NE(out.find("4 of 5 measured kernels matched"), std::string::npos) << out;
  EXPECT_NE(out.find("warning: unmatched: decode_B8Hq32Hkv32N4096d128/sdpa_flash"), std::string::npos) << out;
}

TEST(CompareCli, OutWritesOneRowPerComparison) {
  const std::string h5 = temp_path("cli_sim.h5");
  const std::string report = temp_path("cli_report.h5");
  write_fixture(h5, excerpt_points());
  ASSERT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--out", report}), 0);
  H5::H5File f(report, H5F_ACC_RDONLY);
  hsize_t n = 0;
  f.openDataSet("/comparison/rel_error").getSpace().getSimpleExtentDims(&n);
  EXPECT_EQ(n, 15u);
  std::vector<double> median(3);
  f.openDataSet("/summary/median_rel_error").read(median.data(), H5::PredType::NATIVE_DOUBLE);
  EXPECT_NEAR(median[0], 0.05, 1e-12);
}

TEST(CompareCli, JsonListsRowsAndSummary) {
  const std::string h5 = temp_path("cli_json.h5");
  write_fixture(h5, excerpt_points());
  std::string out;
  ASSERT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--json"}, &out), 0);
  EXPECT_NE(out.find("\"metric\": \"launch__occupancy_limit_registers\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"time_rank_correlation\": 1"), std::string::npos) << out;
}

TEST(CompareCli, CheckExitsOneWhenATargetIsMissed) {
  auto fixture = excerpt_points();
  // DRAM (+5 %) and time (-15 %) meet their targets; one kernel's occupancy limit (exact) does not.
  fixture[0].kernels[0].metrics[2].second = 2;
  const std::string h5 = temp_path("cli_check.h5");
  write_fixture(h5, fixture);
  EXPECT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--check"}), 1);
}

TEST(CompareCli, CheckPassesWhenEveryTargetIsMet) {
  const std::string h5 = temp_path("cli_check_ok.h5");
  write_fixture(h5, excerpt_points());
  EXPECT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--check"}), 0);
}

TEST(CompareCli, NonExportCsvExitsTwo) {
  const std::string h5 = temp_path("cli_bad.h5");
  write_fixture(h5, excerpt_points());
  std::string err;
  EXPECT_EQ(run({"compare", "--measured", kNcuDir + "/bad/no_metrics.csv", "--simulated", h5}, nullptr, &err), 2);
  EXPECT_NE(err.find("not an Nsight Compute export"), std::string::npos) << err;
}

// --out by the output-path policy (docs/output-paths.md; every command: output_path_cli_test.cpp).
TEST(CompareCli, OutFollowsTheOutputPathPolicy) {
  const std::string h5 = temp_path("cli_policy_sim.h5");
  write_fixture(h5, excerpt_points());
  const std::string d = temp_path("cli_policy");
  fs::remove_all(d);
  fs::create_directories(d + "/dir");
  attnsim::testing::make_fifo(d + "/fifo");
  fs::create_symlink("report.h5", d + "/link.h5");
  std::string err;
  EXPECT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--out", d + "/dir"}, nullptr, &err), 2);
  EXPECT_NE(err.find(d + "/dir: is a directory"), std::string::npos) << err;
  {
    attnsim::testing::FifoReader reader(d + "/fifo");
    EXPECT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--out", d + "/fifo"}), 0);
    EXPECT_EQ(reader.finish().substr(0, 4), "\x89HDF");
  }
  EXPECT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--out", d + "/link.h5"}), 0);
  EXPECT_EQ(attnsim::testing::file_type(d + "/fifo"), S_IFIFO);
  EXPECT_EQ(attnsim::testing::file_type(d + "/link.h5"), S_IFLNK);
  EXPECT_TRUE(H5::H5File::isHdf5(d + "/report.h5"));
  if (attnsim::testing::is_root()) {
    attnsim::testing::make_device(d + "/full", S_IFCHR, 1, 7);
    EXPECT_EQ(run({"compare", "--measured", kExcerpt, "--simulated", h5, "--out", d + "/full"}, nullptr, &err), 2);
    EXPECT_NE(err.find(d + "/full: cannot write: no space left on device"), std::string::npos) << err;
    EXPECT_EQ(attnsim::testing::file_type(d + "/full"), S_IFCHR);
  }
}

}  // namespace
}  // namespace attnsim::app
