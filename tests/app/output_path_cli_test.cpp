// Every command that writes an --out (run, sweep, merge, formulas; compare in compare_test.cpp)
// on every kind of path, made in the test's own temporary directory (device nodes by mknod, as
// root only; never a path under /dev): the special file is what it was afterwards, and the exit
// code and message are those of docs/output-paths.md. Also: a SIGINT or SIGTERM that ends the
// process while a temporary is being written removes it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "sim/app/commands.h"
#include "sim/app/sigint_flag.h"
#include "sim/io/h5_results_reader.h"
#include "sim/io/output_target.h"
#include "tests/io/special_files.h"

namespace attnsim::app {
namespace {

namespace fs = std::filesystem;
using attnsim::testing::file_type;

const std::string kSweep =
    "device: teaching\nbase:\n  kernel: flash2\n  seq: 128\n  head_dim: 32\n"
    "axes:\n  block_m: [32, 64]\n  block_n: [16, 32]\n";
const std::string kHdf5Signature = "\x89HDF\r\n\x1a\n";

std::string scratch(const std::string& name) {
  static const std::string base = ::testing::TempDir();  // before a test points TMPDIR elsewhere
  const fs::path d = fs::path(base) / ("attnsim_outpath_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Result {
  int code;
  std::string out, err;
};

Result cli(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  const int code = run_cli(argv, out, err);
  return {code, out.str(), err.str()};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The command lines that write `out`, with their inputs made in `dir` (shards for merge).
std::vector<std::pair<std::string, std::vector<std::string>>> writers(const std::string& dir, const std::string& out) {
  std::ofstream(dir + "/s.yaml") << kSweep;
  if (!fs::exists(dir + "/s0.h5")) {
    EXPECT_EQ(cli({"sweep", dir + "/s.yaml", "--out", dir + "/s0.h5", "--shard", "0/2", "-j", "1"}).code, 0);
    EXPECT_EQ(cli({"sweep", dir + "/s.yaml", "--out", dir + "/s1.h5", "--shard", "1/2", "-j", "1"}).code, 0);
  }
  return {
      {"run", {"run", "--device", "teaching", "--kernel", "flash2", "--set", "seq=128", "--set", "head_dim=32",
               "--out", out}},
      {"sweep", {"sweep", dir + "/s.yaml", "--out", out, "-j", "1"}},
      {"merge", {"merge", "--out", out, dir + "/s0.h5", dir + "/s1.h5"}},
      {"formulas", {"formulas", "--seq", "1024", "--tile", "64", "--head-dim", "64", "--out", out}},
  };
}

// The journal of a stream output goes to $TMPDIR: point it at a directory of the test's own.
class OutputPathCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("TMPDIR");
    had_tmpdir_ = old != nullptr;
    if (old) old_tmpdir_ = old;
    // One per test: ctest runs the tests of this file in parallel processes.
    tmpdir_ = scratch(std::string("tmpdir_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ::setenv("TMPDIR", tmpdir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_tmpdir_) ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  std::string tmpdir_, old_tmpdir_;
  bool had_tmpdir_ = false;
};

TEST_F(OutputPathCli, SymlinkKeepsTheLinkAndReplacesItsTarget) {
  const std::string d = scratch("link");
  fs::create_directories(d + "/results");
  for (const auto& [name, argv] : writers(d, d + "/link.h5")) {
    fs::remove(d + "/link.h5");
    fs::remove(d + "/results/r.h5");
    std::ofstream(d + "/results/r.h5") << "older";
    fs::create_symlink("results/r.h5", d + "/link.h5");
    const Result r = cli(argv);
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_EQ(file_type(d + "/link.h5"), S_IFLNK) << name;
    EXPECT_NO_THROW(io::read_results_h5(d + "/results/r.h5")) << name;
    EXPECT_EQ(listing(d + "/results"), std::vector<std::string>{"r.h5"}) << name;  // no temporary, no journal
  }
}

TEST_F(OutputPathCli, DanglingSymlinkIsWrittenThroughOrRefusedWhenItsDirectoryIsMissing) {
  const std::string d = scratch("dangling");
  fs::create_directories(d + "/results");
  for (const auto& [name, argv] : writers(d, d + "/link.h5")) {
    fs::remove(d + "/link.h5");
    fs::remove(d + "/results/new.h5");
    fs::create_symlink("results/new.h5", d + "/link.h5");
    Result r = cli(argv);
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_EQ(file_type(d + "/link.h5"), S_IFLNK) << name;
    EXPECT_NO_THROW(io::read_results_h5(d + "/results/new.h5")) << name;

    fs::remove(d + "/link.h5");
    fs::create_symlink("nodir/new.h5", d + "/link.h5");
    r = cli(argv);
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_TRUE(contains(r.err, d + "/link.h5: is a dangling symbolic link to " + d + "/nodir/new.h5, whose directory " +
                                    d + "/nodir does not exist"))
        << name << ": " << r.err;
    EXPECT_FALSE(fs::exists(d + "/nodir")) << name;
  }
}

TEST_F(OutputPathCli, DirectoryAndSocketAreRefusedBeforeAnyWork) {
  const std::string d = scratch("refused");
  fs::create_directories(d + "/dir");
  attnsim::testing::make_socket(d + "/sock");
  for (const std::string target : {"dir", "sock"}) {
    for (const auto& [name, argv] : writers(d, d + "/" + target)) {
      const auto before = listing(d);
      const Result r = cli(argv);
      EXPECT_EQ(r.code, 2) << name;
      const std::string what = target == "dir" ? ": is a directory" : ": is a socket";
      EXPECT_TRUE(contains(r.err, "--out: " + d + "/" + target + what)) << name << ": " << r.err;
      EXPECT_EQ(listing(d), before) << name << " " << target;
    }
  }
  EXPECT_EQ(file_type(d + "/dir"), S_IFDIR);
  EXPECT_EQ(file_type(d + "/sock"), S_IFSOCK);
}

TEST_F(OutputPathCli, FifoReceivesTheWholeFileOnceAndStaysAFifo) {
  const std::string d = scratch("fifo");
  attnsim::testing::make_fifo(d + "/fifo");
  for (const auto& [name, argv] : writers(d, d + "/fifo")) {
    attnsim::testing::FifoReader reader(d + "/fifo");
    const Result r = cli(argv);
    const std::string bytes = reader.finish();
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_FALSE(reader.timed_out()) << name;
    EXPECT_EQ(bytes.substr(0, 8), kHdf5Signature) << name;
    // Once: the bytes are exactly one file (a copy opens as an HDF5 file of that size).
    std::ofstream(d + "/copy.h5", std::ios::binary) << bytes;
    if (name != "formulas") {
      EXPECT_NO_THROW(io::read_results_h5(d + "/copy.h5")) << name;
    }
    fs::remove(d + "/copy.h5");
    EXPECT_EQ(file_type(d + "/fifo"), S_IFIFO) << name;
  }
  EXPECT_EQ(listing(d), (std::vector<std::string>{"fifo", "s.yaml", "s0.h5", "s1.h5"}));
  EXPECT_TRUE(listing(tmpdir_).empty());  // the sweep's journal was removed at its end
}

TEST_F(OutputPathCli, NullDeviceDiscardsTheFileAndStaysADevice) {
  if (!attnsim::testing::is_root()) GTEST_SKIP() << "mknod needs root";
  const std::string d = scratch("null");
  attnsim::testing::make_device(d + "/null", S_IFCHR, 1, 3);
  for (const auto& [name, argv] : writers(d, d + "/null")) {
    const Result r = cli(argv);
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_EQ(file_type(d + "/null"), S_IFCHR) << name;
    EXPECT_EQ(attnsim::testing::device_number(d + "/null"), makedev(1, 3)) << name;
  }
  EXPECT_EQ(listing(d), (std::vector<std::string>{"null", "s.yaml", "s0.h5", "s1.h5"}));
  EXPECT_TRUE(listing(tmpdir_).empty());
}

TEST_F(OutputPathCli, FullDeviceIsExitTwoNoSpaceLeft) {
  if (!attnsim::testing::is_root()) GTEST_SKIP() << "mknod needs root";
  const std::string d = scratch("full");
  attnsim::testing::make_device(d + "/full", S_IFCHR, 1, 7);
  for (const auto& [name, argv] : writers(d, d + "/full")) {
    const Result r = cli(argv);
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_TRUE(contains(r.err, d + "/full: cannot write: no space left on device")) << name << ": " << r.err;
    EXPECT_EQ(file_type(d + "/full"), S_IFCHR) << name;
    EXPECT_EQ(attnsim::testing::device_number(d + "/full"), makedev(1, 7)) << name;
    if (name == "sweep") {  // the journal keeps the points, in $TMPDIR, for --resume
      const std::string journal = io::journal_dir_for(d + "/full");
      EXPECT_EQ(journal.rfind(tmpdir_, 0), 0u) << journal;
      EXPECT_TRUE(contains(r.err, "the journal " + journal + " keeps the 4 points")) << r.err;
      const Result resumed = cli({"sweep", d + "/s.yaml", "--out", d + "/full", "-j", "1", "--resume"});
      EXPECT_EQ(resumed.code, 2);
      EXPECT_TRUE(contains(resumed.out + resumed.err, "keeps the 4 points")) << resumed.err;
      fs::remove_all(journal);
    }
  }
  EXPECT_EQ(listing(d), (std::vector<std::string>{"full", "s.yaml", "s0.h5", "s1.h5"}));
}

// In a child process (the handlers end it): writes a file larger than RLIMIT_FSIZE allows; the
// SIGXFSZ that the write raises sends `sig` to the process in the middle of the write, with the
// temporary there. `before` runs first (e.g. a SigintFlag and a first SIGINT).
void die_mid_write(const std::string& out, int sig, const std::function<void()>& before) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    remove_temporaries_on_signals();
    static int g_sig;
    g_sig = sig;
    ::signal(SIGXFSZ, +[](int) { ::raise(g_sig); });
    if (before) before();
    rlimit l{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &l);
    const std::string bytes(1 << 20, 'x');
    try {
      io::write_output(out, bytes.data(), bytes.size());
    } catch (...) {
    }
    ::_exit(0);  // not reached when the signal ended the process
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status)) << "status " << status;
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), sig);
  }
}

TEST(OutputPathSignals, SigtermOrSigintMidWriteRemovesTheTemporary) {
  for (int sig : {SIGTERM, SIGINT}) {
    const std::string d = scratch("signal_" + std::to_string(sig));
    std::ofstream(d + "/out.h5") << "older";
    die_mid_write(d + "/out.h5", sig, nullptr);
    EXPECT_EQ(listing(d), std::vector<std::string>{"out.h5"}) << "signal " << sig;
    std::ifstream in(d + "/out.h5");
    std::string text;
    in >> text;
    EXPECT_EQ(text, "older");
  }
}

TEST(OutputPathSignals, SecondSigintUnderASigintFlagRemovesTheTemporary) {
  const std::string d = scratch("signal_flag");
  die_mid_write(d + "/out.h5", SIGINT, [] {
    static std::optional<SigintFlag> flag;
    flag.emplace();
    ::raise(SIGINT);  // the first: only sets the flag
    if (!flag->raised().load()) ::_exit(7);
  });
  EXPECT_TRUE(listing(d).empty());
}

}  // namespace
}  // namespace attnsim::app
