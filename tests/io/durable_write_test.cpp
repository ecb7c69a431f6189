// Output files when the file system refuses a write (issue 9). A per-process file size limit
// (RLIMIT_FSIZE: writes past it fail with EFBIG, like ENOSPC on a full disk) stands in for a full
// disk here; scripts/tests/test_full_disk.py fills a "disk" for real (ENOSPC) around the attnsim
// binary.
#include "sim/io/durable_write.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io_test_util.h"
#include "sim/io/h5_results_writer.h"
#include "sim/io/point_journal.h"

namespace attnsim::io {
namespace {

namespace fs = std::filesystem;

// Files this process writes may not grow beyond `bytes` while it lives.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead of killing us
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit l = old_;
    l.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &l);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_;
};

std::vector<std::string> names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Provenance prov() { return Provenance::current("attnsim test"); }

TEST(DurableWrite, WritesTheBytes) {
  const std::string path = testing::scratch_dir("durable_ok") + "/f";
  const std::string text(100000, 'x');
  write_file_durably(path, text.data(), text.size());
  EXPECT_EQ(slurp(path), text);
}

TEST(DurableWrite, FailedWriteRemovesTheFileAndNamesTheReason) {
  const std::string dir = testing::scratch_dir("durable_fail");
  const std::string path = dir + "/f";
  const std::string text(100000, 'x');
  try {
    FileSizeLimit limit(4096);
    write_file_durably(path, text.data(), text.size());
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot write: file too large");
    EXPECT_EQ(e.path(), path);
  }
  EXPECT_TRUE(names(dir).empty());
}

TEST(DurableWrite, AnOutputErrorIsAConfigError) {  // exit 2, like an unwritable --out
  const std::string path = testing::scratch_dir("durable_missing") + "/no/such/dir/f";
  EXPECT_THROW(write_file_durably(path, "x", 1), core::ConfigError);
  try {
    write_file_durably(path, "x", 1);
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot write: no such file or directory");
  }
}

TEST(DurableWrite, ResultsFileOnAFullDiskLeavesTheOlderFile) {
  const std::string dir = testing::scratch_dir("durable_h5");
  const std::string path = dir + "/out.h5";
  std::ofstream(path) << "older";
  const std::vector<PointRecord> points = {testing::ok_point(0, 16), testing::ok_point(1, 32)};
  try {
    FileSizeLimit limit(2048);  // the results file is larger
    write_results_h5(path, points, prov(), "");
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot write: file too large");
  }
  EXPECT_EQ(slurp(path), "older");
  EXPECT_EQ(names(dir), std::vector<std::string>{"out.h5"});  // no temporary
  write_results_h5(path, points, prov(), "");                 // room again: it works
  EXPECT_EQ(names(dir), std::vector<std::string>{"out.h5"});
}

TEST(DurableWrite, JournalKeepsItsPointsWhenARecordDoesNotFit) {
  const std::string dir = testing::scratch_dir("durable_journal") + "/out.h5.partial";
  PointJournal j(dir, "h1");
  j.create();
  j.append(testing::ok_point(0, 16));
  try {
    FileSizeLimit limit(64);  // far less than a record
    j.append(testing::ok_point(1, 32));
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/point-1.rec: cannot write: file too large");
  }
  EXPECT_EQ(names(dir), (std::vector<std::string>{"point-0.rec", "sweep_hash"}));
  EXPECT_EQ(j.size(), 1u);
  ASSERT_EQ(j.load().size(), 1u);
}

TEST(DurableWrite, JournalThatCannotBeCreatedLeavesNoDirectory) {
  // A journal directory without its sweep_hash would be refused by --resume.
  const std::string parent = testing::scratch_dir("durable_journal_create");
  PointJournal j(parent + "/out.h5.partial", "h1");
  {
    FileSizeLimit limit(0);
    EXPECT_THROW(j.create(), OutputError);
  }
  EXPECT_FALSE(j.exists());
  EXPECT_TRUE(names(parent).empty());
}

}  // namespace
}  // namespace attnsim::io
