// Determinism (issue 9, STYLE.md): the same inputs give byte-identical HDF5 datasets, run after
// run and whatever -j. Files are compared dataset by dataset (every dataset's path, type class,
// shape and contents), not byte by byte: HDF5 stores object timestamps and the provenance
// attributes hold the command line.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/app/commands.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

using DatasetMap = std::map<std::string, std::string>;  // path -> contents as text/bytes

fs::path scratch(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnsim_determinism_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read_vlen_strings(hid_t ds, hid_t space, hid_t mem_compound, std::size_t n) {
  std::vector<char*> buf(n, nullptr);
  H5Dread(ds, mem_compound, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
  std::string s;
  for (char* p : buf) s += std::string(p ? p : "<null>") + '\x1f';
  H5Dvlen_reclaim(mem_compound, space, H5P_DEFAULT, buf.data());
  return s;
}

std::string read_raw(hid_t ds, hid_t mem_type, std::size_t n) {
  std::string bytes(n * H5Tget_size(mem_type), '\0');
  H5Dread(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data());
  return bytes;
}

// The contents of one dataset: strings as text, numbers as native bytes, compound members one by
// one (a string member as text, any other as double).
std::string dataset_contents(hid_t ds) {
  const hid_t ftype = H5Dget_type(ds);
  const hid_t space = H5Dget_space(ds);
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  std::ostringstream s;
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  s << "class " << H5Tget_class(ftype) << " dims";
  for (hsize_t d : dims) s << ' ' << d;
  s << ": ";
  if (H5Tget_class(ftype) == H5T_STRING && H5Tis_variable_str(ftype) > 0) {
    const hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, H5T_VARIABLE);
    s << read_vlen_strings(ds, space, str, n);
    H5Tclose(str);
  } else if (H5Tget_class(ftype) == H5T_COMPOUND) {
    for (int m = 0; m < H5Tget_nmembers(ftype); ++m) {
      char* name = H5Tget_member_name(ftype, static_cast<unsigned>(m));
      const hid_t mtype = H5Tget_member_type(ftype, static_cast<unsigned>(m));
      const bool is_str = H5Tget_class(mtype) == H5T_STRING;
      hid_t elem = is_str ? H5Tcopy(H5T_C_S1) : H5Tcopy(H5T_NATIVE_DOUBLE);
      if (is_str) H5Tset_size(elem, H5T_VARIABLE);
      const hid_t mem = H5Tcreate(H5T_COMPOUND, H5Tget_size(elem));
      H5Tinsert(mem, name, 0, elem);
      s << '[' << name << "] " << (is_str ? read_vlen_strings(ds, space, mem, n) : read_raw(ds, mem, n));
      H5Tclose(mem);
      H5Tclose(elem);
      H5Tclose(mtype);
      H5free_memory(name);
    }
  } else {
    const hid_t native = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
    s << read_raw(ds, native, n);
    H5Tclose(native);
  }
  H5Sclose(space);
  H5Tclose(ftype);
  return s.str();
}

herr_t visit(hid_t obj, const char* name, const H5O_info_t* info, void* data) {
  if (info->type != H5O_TYPE_DATASET) return 0;
  const hid_t ds = H5Dopen2(obj, name, H5P_DEFAULT);
  (*static_cast<DatasetMap*>(data))[name] = dataset_contents(ds);
  H5Dclose(ds);
  return 0;
}

DatasetMap datasets(const fs::path& file) {
  DatasetMap map;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(f, 0) << "cannot open " << file;
  if (f < 0) return map;
  H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_INC, visit, &map, H5O_INFO_BASIC);
  H5Fclose(f);
  return map;
}

void expect_same_datasets(const DatasetMap& a, const DatasetMap& b) {
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [path, contents] : a) {
    const auto it = b.find(path);
    ASSERT_NE(it, b.end()) << path << " missing from the second file";
    EXPECT_TRUE(it->second == contents) << "dataset " << path << " differs";
  }
}

int cli(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  const int code = run_cli(argv, out, err);
  EXPECT_EQ(code, 0) << err.str();
  return code;
}

// Runs the same `run --out` twice (identical command lines) and returns both files' datasets.
std::pair<DatasetMap, DatasetMap> same_run_twice(const std::string& name) {
  const fs::path dir = scratch(name);
  const std::string out = (dir / "r.h5").string();
  const std::vector<std::string> argv = {"run", "--device", "teaching", "--kernel", "flash2", "--set", "seq=256",
                                         "--set", "head_dim=32", "--set", "causal=true", "--out", out};
  if (cli(argv) != 0) return {};
  fs::rename(out, dir / "first.h5");
  if (cli(argv) != 0) return {};
  return {datasets(dir / "first.h5"), datasets(out)};
}

bool is_record(const std::string& path) {
  return path.size() >= 7 && path.compare(path.size() - 7, 7, "/record") == 0;
}

TEST(Determinism, SameRunTwiceGivesIdenticalDatasets) {
  auto [first, second] = same_run_twice("run");
  EXPECT_TRUE(first.count("table/dram__bytes_read.sum")) << "expected a table column for DRAM reads";
  // The point records are checked by the next test.
  std::erase_if(first, [](const auto& kv) { return is_record(kv.first); });
  std::erase_if(second, [](const auto& kv) { return is_record(kv.first); });
  expect_same_datasets(first, second);
}

TEST(Determinism, SameRunTwiceGivesIdenticalPointRecords) {
  // Host wall time is not stored (io::run_point_record zeroes it), so the records are equal.
  auto [first, second] = same_run_twice("record");
  ASSERT_TRUE(first.count("points/0/record"));
  EXPECT_EQ(first.at("points/0/record"), second.at("points/0/record"));
}

TEST(Determinism, SweepWithOneAndTwoJobsGivesIdenticalDatasets) {
  const fs::path dir = scratch("sweep");
  std::ofstream(dir / "s.yaml") << "device: teaching\nbase:\n  kernel: flash2\n  seq: 256\n  head_dim: 32\n"
                                   "axes:\n  block_m: [32, 64]\n  block_n: [16, 32]\n  causal: [false, true]\n";
  ASSERT_EQ(cli({"sweep", (dir / "s.yaml").string(), "--out", (dir / "j1.h5").string(), "-j", "1"}), 0);
  ASSERT_EQ(cli({"sweep", (dir / "s.yaml").string(), "--out", (dir / "j2.h5").string(), "-j", "2"}), 0);
  const DatasetMap one = datasets(dir / "j1.h5"), two = datasets(dir / "j2.h5");
  EXPECT_TRUE(one.count("table/point_index"));
  EXPECT_TRUE(one.count("points/7/record")) << "expected 8 points (2 x 2 x 2)";
  expect_same_datasets(one, two);
}

TEST(Determinism, DatasetComparisonDetectsADifferentWorkload) {
  // The comparison itself can fail: a different sequence length changes the datasets.
  const fs::path dir = scratch("differs");
  ASSERT_EQ(cli({"run", "--device", "teaching", "--kernel", "flash2", "--set", "seq=256", "--set", "head_dim=32",
                 "--out", (dir / "a.h5").string()}),
            0);
  ASSERT_EQ(cli({"run", "--device", "teaching", "--kernel", "flash2", "--set", "seq=512", "--set", "head_dim=32",
                 "--out", (dir / "b.h5").string()}),
            0);
  const DatasetMap a = datasets(dir / "a.h5"), b = datasets(dir / "b.h5");
  ASSERT_TRUE(a.count("table/seq_q"));
  EXPECT_NE(a.at("table/seq_q"), b.at("table/seq_q"));
  EXPECT_NE(a.at("table/dram__bytes_read.sum"), b.at("table/dram__bytes_read.sum"));
}

}  // namespace
}  // namespace attnsim::app
