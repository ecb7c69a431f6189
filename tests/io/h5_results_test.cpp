#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io_test_util.h"
#include "sim/core/errors.h"
#include "sim/io/h5_results_reader.h"
#include "sim/io/h5_results_writer.h"

namespace attnsim::io {
namespace {

namespace fs = std::filesystem;

Provenance prov() {
  Provenance p = Provenance::current("attnsim sweep s.yaml --out s.h5");
  p.sweep_text = "base: {}\n";
  p.sweep_hash = content_hash(p.sweep_text);
  return p;
}

const Column& col(const ResultsFile& f, const std::string& name) {
  for (const auto& c : f.table)
    if (c.name == name) return c;
  throw std::runtime_error("no column " + name);
}

TEST(H5Results, TableRoundTripsThroughReader) {
  const std::string path = testing::scratch_dir("h5_roundtrip") + "/r.h5";
  write_results_h5(path, {testing::ok_point(0, 64), testing::impossible_point(1, 128), testing::ok_point(2, 32)},
                   prov(), "base: {}\n");
  const ResultsFile f = read_results_h5(path);
  EXPECT_TRUE(f.complete);
  EXPECT_EQ(f.string_attrs.at("command_line"), "attnsim sweep s.yaml --out s.h5");
  EXPECT_EQ(f.config_yaml, "base: {}\n");
  EXPECT_EQ(std::get<std::int64_t>(col(f, "block_m").cells[2]), 32);
  EXPECT_EQ(std::get<std::string>(col(f, "status").cells[1]), "impossible");
  EXPECT_EQ(std::get<double>(col(f, "gpu__time_duration.sum").cells[0]), 2000.5 * 64);
  ASSERT_EQ(f.points.size(), 3u);
  EXPECT_EQ(serialize_point(f.points[2]), serialize_point(testing::ok_point(2, 32)));
}

TEST(H5Results, ContentHashDiffersForDifferentText) {
  EXPECT_NE(content_hash("a: 1\n"), content_hash("a: 2\n"));
  EXPECT_EQ(content_hash(""), "fnv1a64:cbf29ce484222325");  // FNV-1a offset basis
}

TEST(H5Results, NoTemporaryLeftAfterWrite) {
  const std::string dir = testing::scratch_dir("h5_tmp");
  write_run_h5(dir + "/run.h5", testing::small_result(), core::DeviceSpec{}, prov(), "kernel: flash2\n");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], "run.h5");
}

TEST(H5Results, FailedWriteLeavesExistingFileUntouched) {
  const std::string dir = testing::scratch_dir("h5_fail");
  const std::string path = dir + "/t.h5";
  std::ofstream(path) << "old";
  const std::vector<Column> bad = {{"a", {std::int64_t{1}, std::int64_t{2}}}, {"b", {1.0}}};
  EXPECT_THROW(write_table_h5(path, bad, prov()), core::SimError);
  std::ifstream in(path);
  std::string s;
  in >> s;
  EXPECT_EQ(s, "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(H5Results, RunFileHasOneRowWithResolvedWorkload) {
  const std::string path = testing::scratch_dir("h5_run") + "/run.h5";
  core::DeviceSpec d;
  d.name = "teaching";
  write_run_h5(path, testing::small_result(), d, prov(), "kernel: flash2\ndevice: teaching\n");
  const ResultsFile f = read_results_h5(path);
  EXPECT_EQ(col(f, "point_index").cells.size(), 1u);
  EXPECT_EQ(std::get<std::string>(col(f, "kernel").cells[0]), "flash2");
  EXPECT_EQ(std::get<std::string>(col(f, "device").cells[0]), "teaching");
  EXPECT_EQ(std::get<bool>(col(f, "causal").cells[0]), false);
}

TEST(H5Results, ReaderRejectsNonHdf5File) {
  const std::string path = testing::scratch_dir("h5_bad") + "/x.h5";
  std::ofstream(path) << "not hdf5";
  EXPECT_THROW(read_results_h5(path), core::ConfigError);
}

// h5py with no attnsim code: columns in creation order, the DataFrame dict, per-point datasets.
TEST(H5Results, H5pyReadsSchemaWithoutAttnsimCode) {
  if (!std::ifstream("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string dir = testing::scratch_dir("h5_py");
  const std::string path = dir + "/r.h5";
  write_results_h5(path, {testing::ok_point(0, 64), testing::impossible_point(1, 128)}, prov(), "x: 1\n");
  const std::string script = dir + "/check.py";
  std::ofstream(script) << "import h5py, sys, math\n"
                           "f = h5py.File(sys.argv[1], 'r'); t = f['table']\n"
                           "cols = {k: t[k][()] for k in t}\n"
                           "assert list(t)[:5] == ['point_index','status','reason','block_m','device'], list(t)\n"
                           "assert list(cols['block_m']) == [64, 128]\n"
                           "assert t['status'].asstr()[1] == 'impossible'\n"
                           "assert math.isnan(cols['dram__bytes_read.sum'][1])\n"
                           "p = f['points/0']\n"
                           "names = list(p['tensors/names'].asstr()[()])\n"
                           "assert names == ['Q','K','O'], names\n"
                           "b = p['tensors/bytes'][()]\n"
                           "assert b.shape == (3, 8) and b[2][1] == 4096 and b[1][2] == 6144, b\n"
                           "ks = list(p['kernels'])\n"
                           "assert ks == ['0_flash2_fwd', '1_flash2_bwd'], ks\n"
                           "m = p['kernels/0_flash2_fwd/metrics'][()]\n"
                           "assert m[0]['value'] == 4096*64\n"
                           "s = p['series/time_ns'][()]\n"
                           "assert list(s) == [0, 100, 200, 64000+16, 64100+16, 64200+16], s\n"
                           "assert f.attrs['schema_version'] == 2 and f.attrs['complete'] == 1\n";
  EXPECT_EQ(std::system(("/usr/bin/python3 " + script + " " + path).c_str()), 0);
}

}  // namespace
}  // namespace attnsim::io
