// The output-path policy (sim/io/output_target.h, docs/output-paths.md) on every kind of path, each
// made in the test's own temporary directory: a regular file is replaced through an exclusive
// temporary; links are followed and stay; a FIFO and character devices (mknod, as root only)
// receive the bytes once and stay what they were; directories, sockets and block devices are
// refused with the path and its kind.
#include "sim/io/output_target.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "io_test_util.h"
#include "sim/io/durable_write.h"
#include "sim/io/h5_results_writer.h"
#include "special_files.h"

namespace attnsim::io {
namespace {

namespace fs = std::filesystem;
using attnsim::testing::file_type;

std::vector<std::string> names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ino_t inode(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// The message of the OutputError `f` throws, or "no error".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const OutputError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kBytes = std::string(200000, 'x') + "end";

TEST(OutputTarget, RegularFileIsReplacedThroughANewFile) {
  const std::string d = testing::scratch_dir("target_regular");
  const std::string out = d + "/out.h5";
  std::ofstream(out) << "older";
  const ino_t before = inode(out);
  const OutputTarget t = resolve_output(out);
  EXPECT_EQ(t.kind, OutputTarget::Kind::kFile);
  EXPECT_EQ(t.target, out);
  write_output(out, kBytes.data(), kBytes.size());
  EXPECT_EQ(slurp(out), kBytes);
  EXPECT_NE(inode(out), before);  // renamed over, not written in place
  EXPECT_EQ(names(d), std::vector<std::string>{"out.h5"});
  EXPECT_EQ(journal_dir_for(out), out + ".partial");
}

TEST(OutputTarget, TemporaryIsCreatedExclusivelyNeverThroughAPlantedLink) {
  const std::string d = testing::scratch_dir("target_exclusive");
  const std::string out = d + "/out.h5";
  const std::string taken = out + ".tmp-" + std::to_string(::getpid());
  std::ofstream(d + "/victim") << "victim";
  fs::create_symlink(d + "/victim", taken);  // a leftover name, here a link to another file
  write_output(out, kBytes.data(), kBytes.size());
  EXPECT_EQ(slurp(out), kBytes);
  EXPECT_EQ(slurp(d + "/victim"), "victim");
  EXPECT_EQ(file_type(taken), S_IFLNK);
  EXPECT_EQ(names(d), (std::vector<std::string>{"out.h5", "out.h5.tmp-" + std::to_string(::getpid()), "victim"}));
}

TEST(OutputTarget, SymlinkIsFollowedAndItsTargetReplacedInTheTargetsDirectory) {
  const std::string d = testing::scratch_dir("target_link");
  fs::create_directories(d + "/a");
  fs::create_directories(d + "/b");
  std::ofstream(d + "/b/real.h5") << "older";
  fs::create_symlink("../b/real.h5", d + "/a/hop");  // relative, from the link's directory
  fs::create_symlink("a/hop", d + "/link.h5");       // a chain of two links
  const OutputTarget t = resolve_output(d + "/link.h5");
  EXPECT_EQ(t.kind, OutputTarget::Kind::kFile);
  EXPECT_EQ(fs::canonical(t.target), fs::canonical(d + "/b/real.h5"));
  write_output(d + "/link.h5", kBytes.data(), kBytes.size());
  EXPECT_EQ(file_type(d + "/link.h5"), S_IFLNK);
  EXPECT_EQ(file_type(d + "/a/hop"), S_IFLNK);
  EXPECT_EQ(file_type(d + "/b/real.h5"), S_IFREG);
  EXPECT_EQ(slurp(d + "/b/real.h5"), kBytes);
  EXPECT_EQ(names(d + "/b"), std::vector<std::string>{"real.h5"});  // no temporary left
  EXPECT_EQ(fs::canonical(fs::path(journal_dir_for(d + "/link.h5")).parent_path()), fs::canonical(d + "/b"));
}

TEST(OutputTarget, DanglingLinkIsWrittenThroughToItsTarget) {
  const std::string d = testing::scratch_dir("target_dangling");
  fs::create_directories(d + "/sub");
  fs::create_symlink("sub/new.h5", d + "/link.h5");
  write_output(d + "/link.h5", kBytes.data(), kBytes.size());
  EXPECT_EQ(file_type(d + "/link.h5"), S_IFLNK);
  EXPECT_EQ(slurp(d + "/sub/new.h5"), kBytes);
}

TEST(OutputTarget, DanglingLinkIntoAMissingDirectoryIsRefused) {
  const std::string d = testing::scratch_dir("target_dangling_nodir");
  fs::create_symlink("nodir/new.h5", d + "/link.h5");
  EXPECT_EQ(error_of([&] { write_output(d + "/link.h5", "x", 1); }),
            d + "/link.h5: is a dangling symbolic link to " + d + "/nodir/new.h5, whose directory " + d +
                "/nodir does not exist");
  EXPECT_EQ(names(d), std::vector<std::string>{"link.h5"});
}

TEST(OutputTarget, LoopOfLinksIsRefused) {
  const std::string d = testing::scratch_dir("target_loop");
  fs::create_symlink("b", d + "/a");
  fs::create_symlink("a", d + "/b");
  EXPECT_EQ(error_of([&] { write_output(d + "/a", "x", 1); }),
            d + "/a: cannot follow: too many levels of symbolic links");
}

TEST(OutputTarget, DirectoriesSocketsAndLinksToThemAreRefusedNamingWhatTheyAre) {
  const std::string d = testing::scratch_dir("target_refused");
  fs::create_directories(d + "/dir");
  attnsim::testing::make_socket(d + "/sock");
  fs::create_symlink("dir", d + "/dirlink");
  EXPECT_EQ(error_of([&] { write_output(d + "/dir", "x", 1); }),
            d + "/dir: is a directory; give a file name such as " + d + "/dir/out.h5");
  EXPECT_EQ(error_of([&] { write_output(d + "/sock", "x", 1); }),
            d + "/sock: is a socket; an output must be a regular file (replaced), a character device or a FIFO "
                "(written through)");
  EXPECT_NE(error_of([&] { write_output(d + "/dirlink", "x", 1); }).find("is a symbolic link to a directory"),
            std::string::npos);
  EXPECT_THROW(resolve_output(d + "/sock"), core::ConfigError);  // exit 2
  EXPECT_EQ(file_type(d + "/dir"), S_IFDIR);
  EXPECT_EQ(file_type(d + "/sock"), S_IFSOCK);
  EXPECT_EQ(file_type(d + "/dirlink"), S_IFLNK);
  EXPECT_TRUE(fs::is_empty(d + "/dir"));
  EXPECT_EQ(names(d), (std::vector<std::string>{"dir", "dirlink", "sock"}));
}

TEST(OutputTarget, FifoReceivesTheBytesOnceAndStaysAFifo) {
  const std::string d = testing::scratch_dir("target_fifo");
  attnsim::testing::make_fifo(d + "/fifo");
  fs::create_symlink("fifo", d + "/fifolink");
  EXPECT_EQ(resolve_output(d + "/fifo").kind, OutputTarget::Kind::kStream);
  for (const std::string& path : {d + "/fifo", d + "/fifolink"}) {
    attnsim::testing::FifoReader reader(d + "/fifo");
    write_output(path, kBytes.data(), kBytes.size());
    EXPECT_EQ(reader.finish(), kBytes) << path;
    EXPECT_FALSE(reader.timed_out());
  }
  EXPECT_EQ(file_type(d + "/fifo"), S_IFIFO);
  EXPECT_EQ(file_type(d + "/fifolink"), S_IFLNK);
  EXPECT_EQ(names(d), (std::vector<std::string>{"fifo", "fifolink"}));
  // Its sweep journal lives in the temporary directory, not beside the FIFO.
  EXPECT_EQ(journal_dir_for(d + "/fifo").rfind(d, 0), std::string::npos);
  EXPECT_EQ(journal_dir_for(d + "/fifo"), journal_dir_for(d + "/fifo"));
}

TEST(OutputTarget, FifoWhoseReaderLeavesIsABrokenPipeNotASignal) {
  const std::string d = testing::scratch_dir("target_fifo_epipe");
  const std::string fifo = d + "/fifo";
  attnsim::testing::make_fifo(fifo);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  std::string error = "not done";
  std::thread writer([&] { error = error_of([&] { write_output(fifo, kBytes.data(), kBytes.size()); }); });
  // The writer fills the pipe (64 KiB < 200 KB) and waits; then the reader goes away.
  for (int i = 0; i < 2000; ++i) {
    pollfd p{reader, POLLIN, 0};
    if (::poll(&p, 1, 10) > 0) break;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::close(reader);
  writer.join();
  EXPECT_EQ(error, fifo + ": cannot write: broken pipe");
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);  // consumed: nothing left to kill the process later
  EXPECT_EQ(file_type(fifo), S_IFIFO);
}

TEST(OutputTarget, NullDeviceDiscardsAndFullDeviceSaysNoSpace) {
  if (!attnsim::testing::is_root()) GTEST_SKIP() << "mknod needs root";
  const std::string d = testing::scratch_dir("target_devices");
  attnsim::testing::make_device(d + "/null", S_IFCHR, 1, 3);
  attnsim::testing::make_device(d + "/full", S_IFCHR, 1, 7);
  fs::create_symlink("null", d + "/nulllink");
  write_output(d + "/null", kBytes.data(), kBytes.size());
  write_output(d + "/nulllink", kBytes.data(), kBytes.size());
  const std::vector<PointRecord> points = {testing::ok_point(0, 16)};
  write_results_h5(d + "/null", points, Provenance::current("attnsim test"), "");  // an HDF5 file too
  EXPECT_EQ(error_of([&] { write_output(d + "/full", kBytes.data(), kBytes.size()); }),
            d + "/full: cannot write: no space left on device");
  EXPECT_EQ(error_of([&] { write_results_h5(d + "/full", points, Provenance::current("attnsim test"), ""); }),
            d + "/full: cannot write: no space left on device");
  EXPECT_EQ(file_type(d + "/null"), S_IFCHR);
  EXPECT_EQ(file_type(d + "/full"), S_IFCHR);
  EXPECT_EQ(file_type(d + "/nulllink"), S_IFLNK);
  EXPECT_EQ(attnsim::testing::device_number(d + "/null"), makedev(1, 3));
  EXPECT_EQ(attnsim::testing::device_number(d + "/full"), makedev(1, 7));
  EXPECT_EQ(names(d), (std::vector<std::string>{"full", "null", "nulllink"}));
}

TEST(OutputTarget, BlockDeviceIsRefusedUnopened) {
  if (!attnsim::testing::is_root()) GTEST_SKIP() << "mknod needs root";
  const std::string d = testing::scratch_dir("target_block");
  attnsim::testing::make_device(d + "/blk", S_IFBLK, 240, 0);
  EXPECT_EQ(error_of([&] { write_output(d + "/blk", "x", 1); }),
            d + "/blk: is a block device; an output must be a regular file (replaced), a character device or a "
                "FIFO (written through)");
  EXPECT_EQ(file_type(d + "/blk"), S_IFBLK);
  EXPECT_EQ(names(d), std::vector<std::string>{"blk"});
}

TEST(OutputTarget, MissingOrUnwritableDirectoryIsRefused) {
  const std::string d = testing::scratch_dir("target_nodir");
  EXPECT_EQ(error_of([&] { resolve_output(d + "/no/such/out.h5"); }),
            d + "/no/such/out.h5: directory " + d + "/no/such does not exist");
  EXPECT_EQ(error_of([&] { resolve_output(""); }), "empty output path");
}

}  // namespace
}  // namespace attnsim::io
