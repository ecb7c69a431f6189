// The bad-input table (issue 9): every CLI path fed typos, absurd sizes, broken files and
// unusable paths must exit 2 with a message naming the file/line/key or the flag, and leave no
// output file (nor a temporary sibling) behind. Each row is run in-process through app::run_cli.
#include <gtest/gtest.h>
#include <H5Cpp.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/commands.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;

const std::string kData = ATTNSIM_TEST_DATA;
const std::string kBadInput = kData + "/bad_input";

// Prepares files in the case's scratch directory before the command runs.
using Prepare = void (*)(const fs::path& dir);

struct BadCase {
  BadCase(std::string n, std::vector<std::string> a, std::vector<std::string> e, Prepare p = nullptr,
          std::string s = "")
      : name(std::move(n)), argv(std::move(a)), expect(std::move(e)), prepare(p), skip(std::move(s)) {}
  std::string name;
  std::vector<std::string> argv;       // "{tmp}" = scratch dir, "{in}" = tests/data/bad_input,
                                       // "{data}" = tests/data
  std::vector<std::string> expect;     // substrings of stderr (same placeholders)
  Prepare prepare = nullptr;
  std::string skip;                    // non-empty: known failure in someone else's file (TODO)
};

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// An HDF5 file written by "another program": one integer dataset, no attnsim attributes.
void foreign_h5(const fs::path& dir) {
  H5::H5File f((dir / "foreign.h5").string(), H5F_ACC_TRUNC);
  const hsize_t dims[1] = {4};
  H5::DataSpace space(1, dims);
  H5::DataSet ds = f.createDataSet("temperatures", H5::PredType::NATIVE_INT, space);
  const int values[4] = {1, 2, 3, 4};
  ds.write(values, H5::PredType::NATIVE_INT);
}

void text_h5(const fs::path& dir) { write_file(dir / "text.h5", "this is not an HDF5 file\n"); }

void both_h5(const fs::path& dir) {
  foreign_h5(dir);
  text_h5(dir);
}

void empty_csv(const fs::path& dir) { write_file(dir / "empty.csv", ""); }

void unreadable_dir(const fs::path& dir) { fs::create_directories(dir / "adir.yaml"); }

void a_file(const fs::path& dir) { write_file(dir / "afile", "a file, not a directory\n"); }

std::string expand(std::string s, const fs::path& tmp) {
  const std::map<std::string, std::string> vars = {
      {"{tmp}", tmp.string()}, {"{in}", kBadInput}, {"{data}", kData}};
  for (const auto& [k, v] : vars)
    for (auto pos = s.find(k); pos != std::string::npos; pos = s.find(k, pos + v.size()))
      s.replace(pos, k.size(), v);
  return s;
}

// Files (names and sizes) under `dir`, so a case can check nothing was added or changed.
std::map<std::string, std::uintmax_t> listing(const fs::path& dir) {
  std::map<std::string, std::uintmax_t> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    files[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? e.file_size() : 0;
  return files;
}

// First line of a tests/data/bad/NAME.expected fixture, prefixed with the fixture's name as
// the loaders print it ("NAME.yaml:LINE: key.path: message").
std::string expected_line(const std::string& stem, const std::string& ext) {
  std::ifstream in(kData + "/bad/" + stem + ".expected");
  std::string line;
  std::getline(in, line);
  return stem + ext + ":" + line;
}

std::vector<BadCase> fixture_cases() {
  std::vector<BadCase> cases;
  for (const char* stem : {"device_malformed", "device_many_problems", "device_missing_key",
                           "device_negative_size", "device_non_pow2_line", "device_smem_block_exceeds_sm",
                           "device_unknown_key", "device_wrong_type", "device_zero_size"})
    cases.push_back({std::string("run_") + stem,
                     {"run", "--device", "{data}/bad/" + std::string(stem) + ".yaml", "--kernel", "flash2",
                      "--out", "{tmp}/r.h5"},
                     {expected_line(stem, ".yaml")}});
  for (const char* stem : {"workload_kv_heads", "workload_overflow", "workload_unknown_kernel",
                           "workload_unknown_key", "workload_wrong_type"})
    cases.push_back({std::string("run_") + stem,
                     {"run", "--device", "teaching", "--workload", "{data}/bad/" + std::string(stem) + ".yaml",
                      "--out", "{tmp}/r.h5"},
                     {expected_line(stem, ".yaml")}});
  for (const char* stem : {"bad_integer", "bad_number", "missing_column", "ncu_no_id", "no_metrics",
                           "not_csv", "ragged"}) {
    std::ifstream in(kData + "/ncu/bad/" + std::string(stem) + ".expected");
    std::string line;
    std::getline(in, line);
    cases.push_back({std::string("compare_") + stem,
                     {"compare", "--measured", "{data}/ncu/bad/" + std::string(stem) + ".csv", "--simulated",
                      "{tmp}/foreign.h5", "--out", "{tmp}/c.h5"},
                     {line}, foreign_h5});
  }
  return cases;
}

std::vector<BadCase> table_cases() {
  const std::vector<std::string> run = {"run", "--device", "teaching", "--kernel", "flash2"};
  auto run_with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = run;
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {"--out", "{tmp}/r.h5"});
    return a;
  };
  return {
      // --- run: flags
      {"run_unknown_flag", run_with({"--frobnicate"}), {"frobnicate"}},
      {"run_missing_device", {"run", "--kernel", "flash2", "--out", "{tmp}/r.h5"}, {"device"}},
      {"run_neither_workload_nor_kernel", {"run", "--device", "teaching", "--out", "{tmp}/r.h5"}, {"--workload"}},
      {"run_both_workload_and_kernel", run_with({"--workload", "{in}/small_workload.yaml"}), {"--workload"}},
      {"run_flag_without_value", {"run", "--device", "teaching", "--out", "{tmp}/r.h5", "--kernel"}, {"kernel"}},
      {"run_unknown_kernel", {"run", "--device", "teaching", "--kernel", "flash9", "--out", "{tmp}/r.h5"}, {"flash9"}},
      {"run_unknown_device", {"run", "--device", "h9000", "--kernel", "flash2", "--out", "{tmp}/r.h5"}, {"h9000"}},
      {"run_missing_device_file", {"run", "--device", "{tmp}/nodev.yaml", "--kernel", "flash2", "--out", "{tmp}/r.h5"},
       {"nodev.yaml"}},
      // --- run: --set
      {"set_negative_seq", run_with({"--set", "seq=-1"}), {"--set seq"}},
      {"set_without_equals", run_with({"--set", "nokey"}), {"--set", "nokey"}},
      {"set_nan_seq", run_with({"--set", "seq=nan"}), {"--set seq"}},
      {"set_huge_seq", run_with({"--set", "seq=1e30"}), {"--set seq"}},
      {"set_heads_not_multiple_of_kv_heads", run_with({"--set", "heads=3", "--set", "kv_heads=2"}), {"kv_heads"}},
      {"set_tiles_exceed_shared_memory", run_with({"--set", "block_m=4096", "--set", "block_n=4096"}),
       {"--set block_n: flash2 tiles 4096x4096"}},
      {"set_bytes_overflow_64_bits",
       run_with({"--set", "batch=4294967296", "--set", "heads=4294967296", "--set", "seq=4294967296"}),
       {"--set", "64 bits"}},
      {"set_unknown_key", run_with({"--set", "sequence=128"}), {"sequence"}},
      {"set_empty_value", run_with({"--set", "seq="}), {"--set seq"}},
      {"set_zero_head_dim", run_with({"--set", "head_dim=0"}), {"--set head_dim"}},
      {"set_unknown_dtype", run_with({"--set", "dtype=fp7"}), {"--set dtype", "fp7"}},
      {"set_negative_sim_min_ops", run_with({"--set", "sim.min_ops=-1"}), {"--set sim.min_ops", "non-negative"}},
      {"set_device_unknown_key", run_with({"--set", "device.l2.capacityy=0"}), {"device.l2.capacityy"}},
      {"set_device_negative", run_with({"--set", "device.sm.count=-4"}), {"device.sm.count"}},
      {"set_device_value_not_yaml", run_with({"--set", "device.clock_ghz=[1,"}), {"device.clock_ghz"}},
      {"set_device_byte_count_trailing_space", run_with({"--set", "device.l2.capacity_bytes=\"5 \""}),
       {"device.l2.capacity_bytes"}, nullptr},
      // --- run: workload files
      {"workload_missing_file", {"run", "--device", "teaching", "--workload", "{tmp}/nope.yaml", "--out", "{tmp}/r.h5"},
       {"nope.yaml"}},
      {"workload_is_a_directory",
       {"run", "--device", "teaching", "--workload", "{tmp}/adir.yaml", "--out", "{tmp}/r.h5"}, {"adir.yaml"},
       unreadable_dir},
      {"workload_malformed_yaml",
       {"run", "--device", "teaching", "--workload", "{in}/workload_malformed.yaml", "--out", "{tmp}/r.h5"},
       {"workload_malformed.yaml"}},
      {"workload_not_a_mapping",
       {"run", "--device", "teaching", "--workload", "{in}/workload_not_mapping.yaml", "--out", "{tmp}/r.h5"},
       {"workload_not_mapping.yaml:1"}},
      // The kernel's own checks run after loading: located at the key's line, or its --set.
      {"workload_tiles_exceed_shared_memory",
       {"run", "--device", "teaching", "--workload", "{in}/workload_tiles_exceed_smem.yaml", "--out", "{tmp}/r.h5"},
       {"workload_tiles_exceed_smem.yaml:5: block_n: flash2 tiles 4096x4096"}},
      {"workload_tma_with_fa2",
       {"run", "--device", "h200", "--workload", "{in}/workload_tma_fa2.yaml", "--out", "{tmp}/r.h5"},
       {"workload_tma_fa2.yaml:7: tma: FA-2's CUDA kernel"}},
      {"workload_and_set_tiles_exceed_shared_memory",
       {"run", "--device", "teaching", "--workload", "{in}/workload_tiles_exceed_smem.yaml", "--set", "block_n=8192",
        "--out", "{tmp}/r.h5"},
       {"--set block_n: flash2 tiles 4096x8192"}},
      {"set_tma_without_tma", run_with({"--set", "impl=triton", "--set", "tma=true"}),
       {"--set tma: needs a GPU with TMA"}},
      {"workload_bytes_overflow",
       {"run", "--device", "teaching", "--workload", "{in}/workload_bytes_overflow.yaml", "--out", "{tmp}/r.h5"},
       {"workload_bytes_overflow.yaml", "64 bits"}},
      // --- run: output paths and resource guard
      {"run_out_directory_missing",
       {"run", "--device", "teaching", "--workload", "{in}/small_workload.yaml", "--out", "{tmp}/no/such/r.h5"},
       {"{tmp}/no/such/r.h5"}, nullptr},
      {"run_out_is_a_directory",
       {"run", "--device", "teaching", "--workload", "{in}/small_workload.yaml", "--out", "{tmp}/adir.yaml"},
       {"adir.yaml"}, unreadable_dir},
      {"run_max_memory_exceeded", run_with({"--max-memory", "1024"}), {"--max-memory", "peak memory"}},
      {"run_max_memory_not_bytes", run_with({"--max-memory", "lots"}), {"--max-memory", "lots"}},
      {"run_max_memory_trailing_space", run_with({"--max-memory", "5 "}), {"--max-memory"}, nullptr},
      {"run_device_is_a_directory",
       {"run", "--device", "{tmp}/adir.yaml", "--kernel", "flash2", "--out", "{tmp}/r.h5"}, {"adir.yaml"},
       unreadable_dir},
      {"sweep_file_is_a_directory", {"sweep", "{tmp}/adir.yaml", "--out", "{tmp}/s.h5"}, {"adir.yaml"},
       unreadable_dir},
      {"check_file_is_a_directory", {"check", "{tmp}/adir.yaml"}, {"adir.yaml"}, unreadable_dir},
      {"check_workload_tiles_exceed_shared_memory",
       {"check", "{in}/workload_tiles_exceed_smem.yaml", "--device", "teaching"},
       {"workload_tiles_exceed_smem.yaml:5: block_n: flash2 tiles 4096x4096"}},
      {"compare_measured_is_a_directory",
       {"compare", "--measured", "{tmp}/adir.yaml", "--simulated", "{tmp}/adir.yaml"}, {"adir.yaml"},
       unreadable_dir},
      {"merge_input_is_a_directory", {"merge", "--out", "{tmp}/m.h5", "{tmp}/adir.yaml"}, {"adir.yaml"},
       unreadable_dir},
      // --- occupancy
      {"occupancy_unknown_flag", {"occupancy", "--device", "h200", "--threads", "128", "--regs", "32", "--warp"},
       {"warp"}},
      {"occupancy_missing_threads", {"occupancy", "--device", "h200", "--regs", "32"}, {"threads"}},
      {"occupancy_negative_threads", {"occupancy", "--device", "h200", "--threads", "-1", "--regs", "32"},
       {"--threads"}},
      {"occupancy_threads_not_a_number", {"occupancy", "--device", "h200", "--threads", "abc", "--regs", "32"},
       {"threads"}},
      {"occupancy_too_many_registers", {"occupancy", "--device", "h200", "--threads", "128", "--regs", "1000"},
       {"regs"}},
      {"occupancy_unknown_device_key",
       {"occupancy", "--device", "h200", "--threads", "128", "--regs", "32", "--set", "device.nokey=1"}, {"nokey"}},
      {"occupancy_bad_device_file",
       {"occupancy", "--device", "{data}/bad/device_zero_size.yaml", "--threads", "128", "--regs", "32"},
       {expected_line("device_zero_size", ".yaml")}},
      // --- formulas
      {"formulas_missing_tile", {"formulas", "--seq", "1024"}, {"tile"}},
      {"formulas_zero_tile", {"formulas", "--seq", "1024", "--tile", "0"}, {"--tile"}},
      {"formulas_negative_seq", {"formulas", "--seq", "-5", "--tile", "64"}, {"--seq"}},
      {"formulas_tile_not_a_number", {"formulas", "--seq", "1024", "--tile", "abc"}, {"tile"}},
      {"formulas_unknown_dtype", {"formulas", "--seq", "1024", "--tile", "64", "--dtype", "fp7"}, {"--dtype", "fp7"}},
      {"formulas_out_directory_missing",
       {"formulas", "--seq", "1024", "--tile", "64", "--head-dim", "64", "--out", "{tmp}/no/such/f.h5"},
       {"{tmp}/no/such/f.h5"}, nullptr},
      // --- softmax-trace
      {"softmax_empty_entry", {"softmax-trace", "--scores", "1,,2", "--block", "2"}, {"--scores"}},
      {"softmax_nan_entry", {"softmax-trace", "--scores", "1,nan", "--block", "2"}, {"--scores", "nan"}},
      {"softmax_zero_block", {"softmax-trace", "--scores", "1,2", "--block", "0"}, {"--block"}},
      {"softmax_missing_scores", {"softmax-trace", "--block", "2"}, {"scores"}},
      // --- sweep
      {"sweep_missing_out", {"sweep", "{in}/sweep_small.yaml"}, {"out"}},
      {"sweep_dry_run_with_out", {"sweep", "{in}/sweep_small.yaml", "--dry-run", "--out", "{tmp}/s.h5"},
       {"--out", "--dry-run"}},
      {"sweep_dry_run_with_resume", {"sweep", "{in}/sweep_small.yaml", "--dry-run", "--resume"}, {"--resume"}},
      {"sweep_dry_run_bad_axis", {"sweep", "{in}/sweep_empty_axis.yaml", "--dry-run"},
       {"sweep_empty_axis.yaml:5: axes.block_m"}},
      {"sweep_missing_file", {"sweep", "{tmp}/nosweep.yaml", "--out", "{tmp}/s.h5"}, {"nosweep.yaml"}},
      {"sweep_empty_axis", {"sweep", "{in}/sweep_empty_axis.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_empty_axis.yaml:5: axes.block_m"}},
      {"sweep_duplicate_axis", {"sweep", "{in}/sweep_duplicate_axis.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_duplicate_axis.yaml:7", "block_m"}},
      {"sweep_malformed_yaml", {"sweep", "{in}/sweep_malformed.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_malformed.yaml"}},
      {"sweep_unknown_key", {"sweep", "{in}/sweep_unknown_key.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_unknown_key.yaml:4: axis"}},
      {"sweep_bad_base", {"sweep", "{in}/sweep_bad_base.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_bad_base.yaml", "flash9"}},
      {"sweep_bad_expression", {"sweep", "{in}/sweep_bad_expression.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_bad_expression.yaml:7", "constraints"}},
      {"sweep_unknown_device", {"sweep", "{in}/sweep_unknown_device.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_unknown_device.yaml", "device: unknown device preset 'h9000'"}, nullptr},
      {"sweep_empty_file", {"sweep", "{in}/sweep_empty.yaml", "--out", "{tmp}/s.h5"}, {"sweep_empty.yaml"}},
      {"sweep_zip_lengths_differ", {"sweep", "{in}/sweep_zip_lengths.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_zip_lengths.yaml", "zip"}},
      {"sweep_bad_range", {"sweep", "{in}/sweep_bad_range.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_bad_range.yaml:5: axes.block_m"}},
      // A value wrong in itself is bad input wherever it appears (base, set, axes), in sweep and check
      // alike, located at its own line with its full key path and the allowed values.
      {"sweep_bad_axis_values", {"sweep", "{in}/sweep_bad_axis_values.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_bad_axis_values.yaml:8: axes.block_n[1]: expected a positive integer, got '12.5'",
        "sweep_bad_axis_values.yaml:9: axes.seq[0]: expected a positive integer, got -512",
        "sweep_bad_axis_values.yaml:10: axes.cta_order[0]: unknown value 'column-major' (known: row-major, head-major)"}},
      {"check_bad_axis_values", {"check", "{in}/sweep_bad_axis_values.yaml"},
       {"sweep_bad_axis_values.yaml:8: axes.block_n[1]: expected a positive integer, got '12.5'",
        "sweep_bad_axis_values.yaml:9: axes.seq[0]: expected a positive integer, got -512",
        "sweep_bad_axis_values.yaml:10: axes.cta_order[0]: unknown value 'column-major' (known: row-major, head-major)"}},
      // 0 is not a "kernel default" marker for tile keys (a null axis value is): bad input.
      {"sweep_zero_tile", {"sweep", "{in}/sweep_zero_tile.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_zero_tile.yaml:9: axes.zip.block_m[1]: expected a positive integer, got 0"}},
      {"check_zero_tile", {"check", "{in}/sweep_zero_tile.yaml"},
       {"sweep_zero_tile.yaml:9: axes.zip.block_m[1]: expected a positive integer, got 0"}},
      {"sweep_base_typo", {"sweep", "{in}/sweep_base_typo.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_base_typo.yaml:8: base.blockm: unknown key (did you mean 'block_m'?)"}},
      {"check_base_typo", {"check", "{in}/sweep_base_typo.yaml"}, {"sweep_base_typo.yaml:8: base.blockm"}},
      {"sweep_set_bad_value", {"sweep", "{in}/sweep_set_bad_value.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_set_bad_value.yaml:4: set.seq: expected a positive integer, got 0",
        "sweep_set_bad_value.yaml:5: set.device.l2.capacity_bytes: expected a byte count"}},
      {"sweep_device_axis_bad_value", {"sweep", "{in}/sweep_device_axis_bad_value.yaml", "--out", "{tmp}/s.h5"},
       {"sweep_device_axis_bad_value.yaml:8: axes.device.l2.capacity_bytes[1]: expected a byte count"}},
      {"sweep_out_under_a_file", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/afile/s.h5"},
       {"afile is a file, not a directory"}, a_file},
      {"sweep_file_under_a_file", {"sweep", "{tmp}/afile/s.yaml", "--out", "{tmp}/s.h5"},
       {"afile/s.yaml: sweep file not found: a part of the path before the file name is a file"}, a_file},
      {"run_unknown_kernel_said_once", {"run", "--device", "teaching", "--kernel", "flash9"},
       {"error: --kernel: unknown kernel 'flash9'"}},
      {"sweep_bad_shard", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/s.h5", "--shard", "4/4"}, {"--shard"}},
      {"sweep_set_unknown_key", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/s.h5", "--set", "blockm=64"},
       {"--set blockm: unknown key"}},
      {"sweep_set_axis_key", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/s.h5", "--set", "block_m=64"},
       {"--set block_m: the sweep varies this key"}},
      {"sweep_set_bad_values", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/s.h5", "--set", "seq=0", "--set",
                                "device.l2.capacity_bytes=lots"},
       {"--set seq: expected a positive integer, got 0", "--set device.l2.capacity_bytes: expected a byte count"}},
      {"sweep_set_no_value", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/s.h5", "--set", "seq="},
       {"--set seq: missing value"}},
      {"sweep_negative_jobs", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/s.h5", "-j", "-3"}, {"-j"}},
      {"sweep_out_directory_missing", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/no/such/s.h5"},
       {"{tmp}/no/such/s.h5"}, nullptr},
      {"sweep_resume_from_text_file", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/text.h5", "--resume"},
       {"text.h5"}, text_h5},
      {"sweep_resume_from_foreign_hdf5", {"sweep", "{in}/sweep_small.yaml", "--out", "{tmp}/foreign.h5", "--resume"},
       {"foreign.h5"}, foreign_h5},
      // --- check
      {"check_unknown_flag", {"check", "--frobnicate"}, {"frobnicate"}},
      {"check_missing_file", {"check", "{tmp}/nocheck.yaml"}, {"nocheck.yaml"}},
      {"check_bad_set", {"check", "{in}/small_workload.yaml", "--set", "nokey"}, {"--set", "nokey"}},
      {"check_unknown_device", {"check", "{in}/small_workload.yaml", "--device", "h9000"}, {"h9000"}},
      {"check_bad_workload_file", {"check", "{data}/bad/workload_unknown_key.yaml"},
       {expected_line("workload_unknown_key", ".yaml")}},
      // --- compare
      {"compare_missing_measured", {"compare", "--simulated", "{tmp}/foreign.h5"}, {"measured"}, foreign_h5},
      {"compare_measured_missing_file",
       {"compare", "--measured", "{tmp}/nomeasured.csv", "--simulated", "{tmp}/foreign.h5"}, {"nomeasured.csv"},
       foreign_h5},
      {"compare_measured_empty", {"compare", "--measured", "{tmp}/empty.csv", "--simulated", "{tmp}/foreign.h5"},
       {"empty.csv"}, empty_csv},
      {"compare_simulated_text_file",
       {"compare", "--measured", "{data}/ncu/reference_excerpt.csv", "--simulated", "{tmp}/text.h5", "--out",
        "{tmp}/c.h5"},
       {"text.h5"}, text_h5},
      {"compare_simulated_foreign_hdf5",
       {"compare", "--measured", "{data}/ncu/reference_excerpt.csv", "--simulated", "{tmp}/foreign.h5", "--out",
        "{tmp}/c.h5"},
       {"foreign.h5"}, foreign_h5},
      {"compare_simulated_missing",
       {"compare", "--measured", "{data}/ncu/reference_excerpt.csv", "--simulated", "{tmp}/nosim.h5"}, {"nosim.h5"}},
      // --- merge
      {"merge_missing_out", {"merge", "{tmp}/foreign.h5"}, {"out"}, foreign_h5},
      {"merge_no_inputs", {"merge", "--out", "{tmp}/m.h5"}, {"inputs"}},
      {"merge_text_file", {"merge", "--out", "{tmp}/m.h5", "{tmp}/text.h5"}, {"text.h5"}, text_h5},
      {"merge_foreign_hdf5", {"merge", "--out", "{tmp}/m.h5", "{tmp}/foreign.h5", "{tmp}/text.h5"}, {"foreign.h5"},
       both_h5},
      {"merge_missing_input", {"merge", "--out", "{tmp}/m.h5", "{tmp}/noshard.h5"}, {"noshard.h5"}},
      // --- no subcommand
      {"unknown_subcommand", {"frobnicate"}, {"frobnicate"}},
  };
}

std::vector<BadCase> all_cases() {
  std::vector<BadCase> cases = table_cases();
  for (auto& c : fixture_cases()) cases.push_back(std::move(c));
  return cases;
}

// gtest prints the case name instead of the struct's bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitsTwoNamingTheProblemAndLeavesNoFile) {
  const BadCase& c = GetParam();
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  const fs::path tmp = fs::path(::testing::TempDir()) / ("attnsim_bad_input_" + std::to_string(getpid()) + "_" + c.name);
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  if (c.prepare) c.prepare(tmp);
  const auto before = listing(tmp);

  std::vector<std::string> argv;
  for (const auto& a : c.argv) argv.push_back(expand(a, tmp));
  std::ostringstream out, err;
  const int code = run_cli(argv, out, err);

  EXPECT_EQ(code, 2) << "stderr: " << err.str() << "\nstdout: " << out.str();
  for (const auto& e : c.expect)
    EXPECT_NE(err.str().find(expand(e, tmp)), std::string::npos)
        << "expected '" << expand(e, tmp) << "' in stderr: " << err.str();
  EXPECT_EQ(listing(tmp), before) << "the command added or changed files in " << tmp;
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInput, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

}  // namespace
}  // namespace attnsim::app
