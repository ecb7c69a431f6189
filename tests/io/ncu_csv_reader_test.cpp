#include "sim/io/ncu_csv_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/errors.h"

namespace attnsim::io {
namespace {

const std::string kNcuDir = std::string(ATTNSIM_TEST_DATA) + "/ncu";
const std::string kReferenceCsv = std::string(ATTNSIM_REFERENCE_DIR) + "/kernels.csv";

const MeasuredKernel& row(const MeasuredTable& t, std::size_t i) { return t.kernels.at(i); }

// The error message a broken fixture must produce, stored next to it as <name>.expected.
std::string expected_message(const std::string& name) {
  std::ifstream in(kNcuDir + "/bad/" + name + ".expected");
  std::string line;
  std::getline(in, line);
  return line;
}

std::string error_of(const std::string& name) {
  try {
    NcuCsvReader::read_file(kNcuDir + "/bad/" + name + ".csv");
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// Values below are cells read off tests/data/reference/kernels.csv by eye.
TEST(NcuCsvReader, ReferenceFileHasOneRowPerKernel) {
  const MeasuredTable t = NcuCsvReader::read_file(kReferenceCsv);
  EXPECT_EQ(t.layout, CsvLayout::kReference);
  // 6 "std" workloads x 3 kernels + 6 sdpa_flash + 3 decode = 27 rows.
  EXPECT_EQ(t.kernels.size(), 27u);
}

TEST(NcuCsvReader, ReferenceFileMetricColumnsAreTheDoubleUnderscoreOnes) {
  const MeasuredTable t = NcuCsvReader::read_file(kReferenceCsv);
  // Columns 19..41 of the header (launch__grid_dim_x .. l1tex__..._mem_shared.sum).
  EXPECT_EQ(t.metric_names.size(), 23u);
  EXPECT_EQ(t.metric_names.front(), "launch__grid_dim_x");
  EXPECT_EQ(t.metric_names.back(), "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum");
  EXPECT_EQ(row(t, 0).metrics.count("variant_event_ms_median"), 0u);
}

TEST(NcuCsvReader, ReferenceFirstRowWorkloadAndMetrics) {
  const MeasuredTable t = NcuCsvReader::read_file(kReferenceCsv);
  const MeasuredKernel& k = row(t, 0);
  EXPECT_EQ(k.line, 2);
  EXPECT_EQ(k.workload.label, "B1H32N1024d128/std");
  EXPECT_EQ(k.workload.variant, "std");
  EXPECT_EQ(k.workload.pass, "fwd");
  EXPECT_EQ(k.workload.batch, 1u);
  EXPECT_EQ(k.workload.heads, 32u);
  EXPECT_EQ(k.workload.kv_heads, 32u);
  EXPECT_EQ(k.workload.seq_q, 1024u);
  EXPECT_EQ(k.workload.seq_kv, 1024u);
  EXPECT_EQ(k.workload.head_dim, 128u);
  EXPECT_EQ(k.workload.causal, false);
  EXPECT_FALSE(k.workload.block_m.has_value());
  EXPECT_EQ(k.kernel_index, 0u);
  EXPECT_EQ(k.kernel_name, "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_DOUBLE_EQ(k.metrics.at("dram__bytes_read.sum"), 16801792);
  EXPECT_DOUBLE_EQ(k.metrics.at("dram__bytes_write.sum"), 39866368);
  EXPECT_DOUBLE_EQ(k.metrics.at("lts__t_bytes.sum"), 172533408);
  EXPECT_DOUBLE_EQ(k.metrics.at("gpu__time_duration.sum"), 25120);
  EXPECT_DOUBLE_EQ(k.metrics.at("launch__occupancy_limit_registers"), 1);
  EXPECT_DOUBLE_EQ(k.metrics.at("sm__maximum_warps_per_active_cycle_pct"), 18.75);
}

TEST(NcuCsvReader, ReferenceQuotedKernelNameKeepsItsCommas) {
  const MeasuredTable t = NcuCsvReader::read_file(kReferenceCsv);
  const MeasuredKernel& k = row(t, 1);
  EXPECT_EQ(k.kernel_index, 1u);
  EXPECT_EQ(k.kernel_name,
            "void <unnamed>::softmax_warp_forward<c10::Half, c10::Half, float, 10, 0, 0>"
            "(T2 *, const T1 *, int, int, int, const bool");
  EXPECT_DOUBLE_EQ(k.metrics.at("launch__grid_dim_x"), 8192);
  EXPECT_DOUBLE_EQ(k.metrics.at("dram__bytes_read.sum"), 67142912);
}

TEST(NcuCsvReader, ReferenceFlashRowValues) {
  const MeasuredTable t = NcuCsvReader::read_file(kReferenceCsv);
  const MeasuredKernel& k = row(t, 3);
  EXPECT_EQ(k.workload.variant, "sdpa_flash");
  EXPECT_DOUBLE_EQ(k.metrics.at("lts__t_sector_hit_rate.pct"), 75.18);
  EXPECT_DOUBLE_EQ(k.metrics.at("launch__shared_mem_per_block_dynamic"), 65536);
  EXPECT_DOUBLE_EQ(k.metrics.at("launch__occupancy_limit_shared_mem"), 2);
}

TEST(NcuCsvReader, ReferenceDecodeRowHasOneQueryToken) {
  const MeasuredTable t = NcuCsvReader::read_file(kReferenceCsv);
  const MeasuredKernel& k = t.kernels.back();
  EXPECT_EQ(k.line, 28);
  EXPECT_EQ(k.workload.label, "decode_B8Hq32Hkv32N65536d128/sdpa_flash");
  EXPECT_EQ(k.workload.batch, 8u);
  EXPECT_EQ(k.workload.seq_q, 1u);
  EXPECT_EQ(k.workload.seq_kv, 65536u);
  EXPECT_DOUBLE_EQ(k.metrics.at("dram__bytes_read.sum"), 8590247168.0);
  EXPECT_DOUBLE_EQ(k.metrics.at("gpu__time_duration.sum"), 3044992);
}

TEST(NcuCsvReader, ExcerptOfReferenceLayoutParses) {
  const MeasuredTable t = NcuCsvReader::read_file(kNcuDir + "/reference_excerpt.csv");
  ASSERT_EQ(t.kernels.size(), 5u);
  EXPECT_EQ(t.kernels[4].workload.label, "decode_B8Hq32Hkv32N4096d128/sdpa_flash");
  EXPECT_DOUBLE_EQ(t.kernels[4].metrics.at("dram__bytes_read.sum"), 537008896);
}

TEST(NcuCsvReader, NcuRawExportSkipsLogLinesAndUnitsRow) {
  const MeasuredTable t = NcuCsvReader::read_file(kNcuDir + "/ncu_raw_standard.csv");
  EXPECT_EQ(t.layout, CsvLayout::kNcuRaw);
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels[0].line, 5);  // two ==PROF== lines, header, units row
  EXPECT_EQ(t.kernels[0].kernel_name, "gemm_qk_kernel<64, 64, 16>");
}

TEST(NcuCsvReader, NcuRawExportStripsThousandsSeparators) {
  const MeasuredTable t = NcuCsvReader::read_file(kNcuDir + "/ncu_raw_standard.csv");
  EXPECT_DOUBLE_EQ(t.kernels[0].metrics.at("dram__bytes_read.sum"), 16801792);
  EXPECT_DOUBLE_EQ(t.kernels[0].metrics.at("lts__t_bytes.sum"), 172533408);
  EXPECT_DOUBLE_EQ(t.kernels[1].metrics.at("gpu__time_duration.sum"), 54688);
  EXPECT_DOUBLE_EQ(t.kernels[1].metrics.at("launch__grid_size"), 32768);
  EXPECT_DOUBLE_EQ(t.kernels[1].metrics.at("sm__warps_active.avg.pct_of_peak_sustained_active"), 55.8);
}

TEST(NcuCsvReader, NcuRawExportNumbersKernelsInLaunchOrder) {
  const MeasuredTable t = NcuCsvReader::read_file(kNcuDir + "/ncu_raw_standard.csv");
  EXPECT_EQ(t.kernels[0].kernel_index, 0u);
  EXPECT_EQ(t.kernels[1].kernel_index, 1u);
  EXPECT_EQ(t.kernels[2].kernel_index, 2u);
  EXPECT_FALSE(t.kernels[0].workload.has_shape());
}

TEST(NcuCsvReader, NcuRawExportLeavesNotAvailableAndTextMetricsOut) {
  const MeasuredTable t = NcuCsvReader::read_file(kNcuDir + "/ncu_raw_standard.csv");
  EXPECT_EQ(t.kernels[2].metrics.count("sm__maximum_warps_per_active_cycle_pct"), 0u);
  EXPECT_EQ(t.kernels[0].metrics.count("sm__maximum_warps_per_active_cycle_pct"), 1u);
  EXPECT_EQ(t.kernels[0].metrics.count("launch__func_cache_config"), 0u);
}

TEST(NcuCsvReader, JoinedExportCarriesWorkloadAndTiles) {
  const MeasuredTable t = NcuCsvReader::read_file(kNcuDir + "/measured_joined.csv");
  EXPECT_EQ(t.layout, CsvLayout::kNcuRaw);
  ASSERT_EQ(t.kernels.size(), 2u);
  const MeasuredKernel& k = t.kernels[1];
  EXPECT_EQ(k.workload.kernel, "flash2");
  EXPECT_EQ(k.workload.block_m, 64u);
  EXPECT_EQ(k.workload.block_n, 64u);
  EXPECT_EQ(k.workload.warps, 4u);
  EXPECT_EQ(k.workload.stages, 2u);
  EXPECT_EQ(k.workload.cta_order, "row-major");
  EXPECT_EQ(k.kernel_index, 0u);
  EXPECT_DOUBLE_EQ(k.metrics.at("lts__t_bytes.sum"), 240123904);
}

TEST(NcuCsvReader, ParseNumberAcceptsGroupedThousands) {
  EXPECT_EQ(NcuCsvReader::parse_number("1,234,567"), 1234567.0);
  EXPECT_EQ(NcuCsvReader::parse_number("1,234.5"), 1234.5);
  EXPECT_EQ(NcuCsvReader::parse_number("-3.25"), -3.25);
  EXPECT_EQ(NcuCsvReader::parse_number("1e9"), 1e9);
  EXPECT_EQ(NcuCsvReader::parse_number(" 42 "), 42.0);
}

TEST(NcuCsvReader, ParseNumberRejectsMisgroupedOrTextCells) {
  EXPECT_FALSE(NcuCsvReader::parse_number("12,34"));
  EXPECT_FALSE(NcuCsvReader::parse_number("1234,567"));
  EXPECT_FALSE(NcuCsvReader::parse_number(",123"));
  EXPECT_FALSE(NcuCsvReader::parse_number("1,234,"));
  EXPECT_FALSE(NcuCsvReader::parse_number("12abc"));
  EXPECT_FALSE(NcuCsvReader::parse_number("n/a"));
}

TEST(NcuCsvReader, YamlFileIsNotACsv) {
  EXPECT_NE(error_of("not_csv").find(expected_message("not_csv")), std::string::npos)
      << error_of("not_csv");
}

TEST(NcuCsvReader, CsvWithoutMetricColumnsIsNotAnExport) {
  EXPECT_NE(error_of("no_metrics").find(expected_message("no_metrics")), std::string::npos)
      << error_of("no_metrics");
}

TEST(NcuCsvReader, MissingWorkloadColumnIsNamed) {
  EXPECT_NE(error_of("missing_column").find(expected_message("missing_column")), std::string::npos)
      << error_of("missing_column");
}

TEST(NcuCsvReader, MisgroupedNumberNamesLineAndColumn) {
  EXPECT_NE(error_of("bad_number").find(expected_message("bad_number")), std::string::npos)
      << error_of("bad_number");
}

TEST(NcuCsvReader, RaggedRowNamesLine) {
  EXPECT_NE(error_of("ragged").find(expected_message("ragged")), std::string::npos) << error_of("ragged");
}

TEST(NcuCsvReader, FractionalWorkloadSizeIsRejected) {
  EXPECT_NE(error_of("bad_integer").find(expected_message("bad_integer")), std::string::npos)
      << error_of("bad_integer");
}

TEST(NcuCsvReader, NcuExportWithoutIdColumnIsRejected) {
  EXPECT_NE(error_of("ncu_no_id").find(expected_message("ncu_no_id")), std::string::npos)
      << error_of("ncu_no_id");
}

TEST(NcuCsvReader, MissingFileIsAConfigError) {
  EXPECT_THROW(NcuCsvReader::read_file(kNcuDir + "/does_not_exist.csv"), core::ConfigError);
}

TEST(NcuCsvReader, ErrorProblemsCarryFileLineAndColumn) {
  try {
    NcuCsvReader::parse("a,b,dram__bytes_read.sum\n", "x.csv");
    FAIL() << "expected a ConfigError";
  } catch (const core::ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.problems()[0].file, "x.csv");
    EXPECT_EQ(e.problems()[0].line, 1);
    EXPECT_EQ(e.problems()[0].key_path, "kernel_name");
  }
}

}  // namespace
}  // namespace attnsim::io
