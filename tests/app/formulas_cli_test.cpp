#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <H5Cpp.h>
#include <cstdio>

#include "sim/app/commands.h"

namespace attnsim::app {
namespace {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

CliResult run(std::vector<std::string> argv) {
  argv.insert(argv.begin(), "formulas");
  std::ostringstream out, err;
  const int code = run_cli(argv, out, err);
  return {code, out.str(), err.str()};
}

// The integer after `"key": ` at or after `from` in a JSON text; -1 when absent.
std::int64_t json_int(const std::string& text, const std::string& key, std::size_t from = 0) {
  std::smatch m;
  const std::string tail = text.substr(from);
  if (!std::regex_search(tail, m, std::regex("\"" + key + "\": (-?[0-9]+)"))) return -1;
  return std::stoll(m[1].str());
}

// Read bytes of `tensor` inside the top-level object of `kernel` ("standard", "flash1", "flash2").
std::int64_t tensor_bytes(const std::string& json, const std::string& kernel, const std::string& tensor,
                          const std::string& dir) {
  const std::size_t at = json.find("\"" + kernel + "\": {");
  if (at == std::string::npos) return -1;
  const std::size_t t = json.find("\"" + tensor + "\": {", at);
  if (t == std::string::npos) return -1;
  return json_int(json, dir, t);
}

TEST(FormulasCli, SeedExampleTextShowsExactBytesAndUnits) {
  const auto r = run({"--seq", "4096", "--tile", "128"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("33,554,432 B (32 MiB)"), std::string::npos) << r.out;  // 4096² × 2
  EXPECT_NE(r.out.find("32,768 B (32 KiB)"), std::string::npos) << r.out;      // 128² × 2
  EXPECT_NE(r.out.find("ceil(4096 / 128) = 32\n"), std::string::npos) << r.out;
}

TEST(FormulasCli, SeedExampleJsonKeys) {
  const auto r = run({"--seq", "4096", "--tile", "128", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json_int(r.out, "score_bytes"), 33'554'432);
  EXPECT_EQ(json_int(r.out, "tile_bytes"), 32'768);
  EXPECT_EQ(json_int(r.out, "num_blocks"), 32);
  EXPECT_EQ(r.out.find("\"standard\""), std::string::npos);  // no traffic without --head-dim
}

TEST(FormulasCli, RaggedLastBlockIsCountedNotRoundedAway) {
  const auto r = run({"--seq", "4097", "--tile", "128"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("= 33 (last block ragged: 1 of 128 rows)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("33,570,818 B"), std::string::npos) << r.out;  // 4097² × 2
}

TEST(FormulasCli, DtypeSetsBytesPerValue) {
  const auto r = run({"--seq", "4096", "--tile", "128", "--dtype", "fp32", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json_int(r.out, "score_bytes"), 4096LL * 4096 * 4);
  EXPECT_EQ(json_int(r.out, "tile_bytes"), 128LL * 128 * 4);
}

TEST(FormulasCli, RectangularScoreMatrixUsesSeqQTimesSeqKv) {
  const auto r = run({"--seq-q", "1", "--seq-kv", "8192", "--tile", "256", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json_int(r.out, "score_bytes"), 8192 * 2);
  EXPECT_EQ(json_int(r.out, "num_blocks"), 32);
}

// GPT-2 medium shape (published.md, Figure 2): N = 1024, d = 64, 16 heads, batch 64, fp16.
const std::vector<std::string> kGpt2 = {"--seq", "1024", "--tile", "128", "--head-dim", "64",
                                        "--heads", "16", "--batch", "64", "--json"};
constexpr std::int64_t kQkvBytes = 64LL * 16 * 1024 * 64 * 2;  // one pass over Q (or K, V, O)

TEST(FormulasCli, Algorithm1BlockSizesFromDefaultSram) {
  const auto r = run(kGpt2);
  ASSERT_EQ(r.code, 0) << r.err;
  // M = 192 KiB / 2 B = 98,304 elements; B_c = ceil(M / 256) = 384, B_r = min(384, 64) = 64.
  const std::size_t f1 = r.out.find("\"flash1\"");
  ASSERT_NE(f1, std::string::npos);
  EXPECT_EQ(json_int(r.out, "block_m", f1), 64);
  EXPECT_EQ(json_int(r.out, "block_n", f1), 384);
  EXPECT_NE(r.out.find("\"sram_bytes\": 196608"), std::string::npos);
}

TEST(FormulasCli, Flash1ReadsKeysOnceAndQueriesOncePerKeyBlock) {
  const auto r = run(kGpt2);
  ASSERT_EQ(r.code, 0) << r.err;
  // Appendix C: K, V read once; Q read and O read/written T_c = ceil(1024 / 384) = 3 times
  // (the ragged third block counts), plus O's initial write.
  EXPECT_EQ(tensor_bytes(r.out, "flash1", "K", "read"), kQkvBytes);
  EXPECT_EQ(tensor_bytes(r.out, "flash1", "V", "read"), kQkvBytes);
  EXPECT_EQ(tensor_bytes(r.out, "flash1", "Q", "read"), 3 * kQkvBytes);
  EXPECT_EQ(tensor_bytes(r.out, "flash1", "O", "read"), 3 * kQkvBytes);
  EXPECT_EQ(tensor_bytes(r.out, "flash1", "O", "write"), 4 * kQkvBytes);
}

TEST(FormulasCli, StandardWritesAndReadsTheWholeScoreMatrix) {
  const auto r = run(kGpt2);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::int64_t s_bytes = 64LL * 16 * 1024 * 1024 * 2;  // batch × heads × N² × 2
  EXPECT_EQ(tensor_bytes(r.out, "standard", "S", "write"), s_bytes);
  EXPECT_EQ(tensor_bytes(r.out, "standard", "S", "read"), s_bytes);
  EXPECT_EQ(tensor_bytes(r.out, "standard", "P", "write"), s_bytes);
  EXPECT_EQ(tensor_bytes(r.out, "standard", "O", "write"), kQkvBytes);
}

TEST(FormulasCli, Flash2ReadsKeysOncePerQueryBlock) {
  auto args = kGpt2;
  args.insert(args.end(), {"--block-m", "128", "--block-n", "64"});
  const auto r = run(args);
  ASSERT_EQ(r.code, 0) << r.err;
  // One CTA per query block of 128 rows: Q read and O written once, K and V read 1024/128 = 8 times.
  EXPECT_EQ(tensor_bytes(r.out, "flash2", "Q", "read"), kQkvBytes);
  EXPECT_EQ(tensor_bytes(r.out, "flash2", "K", "read"), 8 * kQkvBytes);
  EXPECT_EQ(tensor_bytes(r.out, "flash2", "O", "write"), kQkvBytes);
  // The same blocks for flash1: key blocks of 64 -> T_c = 16 passes over Q.
  EXPECT_EQ(tensor_bytes(r.out, "flash1", "Q", "read"), 16 * kQkvBytes);
}

TEST(FormulasCli, TotalsAreReadPlusWrite) {
  const auto r = run(kGpt2);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* k : {"standard", "flash1", "flash2"}) {
    const std::size_t at = r.out.find(std::string("\"") + k + "\": {");
    ASSERT_NE(at, std::string::npos) << k;
    const std::size_t launches_end = r.out.find("],", r.out.find("\"launches\"", at));
    const std::int64_t read = json_int(r.out, "read", launches_end);
    const std::int64_t write = json_int(r.out, "write", launches_end);
    EXPECT_GT(read, 0) << k;
    EXPECT_EQ(json_int(r.out, "total", launches_end), read + write) << k;
  }
}

TEST(FormulasCli, TextTrafficSectionNamesBlockSizes) {
  auto args = kGpt2;
  args.pop_back();  // no --json
  const auto r = run(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("flash1: B_r = 64, B_c = 384 (Algorithm 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("standard read + write"), std::string::npos) << r.out;
}

TEST(FormulasCli, TileBelowOneIsBadInputNamingTheFlag) {
  const auto r = run({"--seq", "4096", "--tile", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--tile: must be >= 1"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(FormulasCli, MissingSeqIsBadInput) {
  const auto r = run({"--tile", "128"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--seq: required"), std::string::npos) << r.err;
}

TEST(FormulasCli, UnknownDtypeIsBadInput) {
  const auto r = run({"--seq", "64", "--tile", "16", "--dtype", "fp12"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--dtype: unknown dtype 'fp12'"), std::string::npos) << r.err;
}

TEST(FormulasCli, HeadsNotAMultipleOfKvHeadsIsBadInput) {
  const auto r = run({"--seq", "64", "--tile", "16", "--head-dim", "16", "--heads", "16", "--kv-heads", "3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--kv-heads: "), std::string::npos) << r.err;
}

TEST(FormulasCli, TrafficOptionsWithoutHeadDimAreBadInput) {
  const auto r = run({"--seq", "64", "--tile", "16", "--block-m", "32"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--block-m: only meaningful with --head-dim"), std::string::npos) << r.err;
}

TEST(FormulasCli, HelpStatesTheAlgorithm1Convention) {
  const auto r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("B_c = ceil(M / 4d)"), std::string::npos);
  EXPECT_NE(r.out.find("--sram-bytes"), std::string::npos);
}

}  // namespace
}  // namespace attnsim::app

namespace attnsim::app {
namespace {

std::vector<std::int64_t> read_int_column(const std::string& path, const std::string& name) {
  H5::H5File f(path, H5F_ACC_RDONLY);
  H5::DataSet ds = f.openDataSet("/table/" + name);
  hsize_t n = 0;
  ds.getSpace().getSimpleExtentDims(&n);
  std::vector<std::int64_t> v(n);
  ds.read(v.data(), H5::PredType::NATIVE_INT64);
  return v;
}

TEST(FormulasCli, OutWritesTheTrafficTableToHdf5) {
  const std::string path = ::testing::TempDir() + "formulas_out_test.h5";
  std::remove(path.c_str());
  auto r = run({"--seq", "256", "--tile", "64", "--head-dim", "32", "--heads", "2", "--json", "--out", path});
  ASSERT_EQ(r.code, 0) << r.err;
  auto reads = read_int_column(path, "read_bytes");
  auto writes = read_int_column(path, "write_bytes");
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) sum += reads[i] + writes[i];
  // The table holds every kernel's traffic: its sum is the three kernels' totals together.
  std::int64_t expected = 0;
  for (const char* k : {"standard", "flash1", "flash2"}) {
    const std::size_t at = r.out.find(std::string("\"") + k + "\": {");
    ASSERT_NE(at, std::string::npos);
    const std::size_t launches_end = r.out.find("],", r.out.find("\"launches\"", at));
    expected += json_int(r.out, "total", launches_end);
  }
  EXPECT_GT(expected, 0);
  EXPECT_EQ(sum, expected);
  EXPECT_EQ(read_int_column(path, "score_bytes").front(), 256 * 256 * 2);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace attnsim::app
