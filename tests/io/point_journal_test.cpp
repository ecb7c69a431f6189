#include "sim/io/point_journal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io_test_util.h"
#include "sim/core/errors.h"

namespace attnsim::io {
namespace {

TEST(PointJournal, AppendedPointsLoadInIndexOrder) {
  PointJournal j(testing::scratch_dir("journal_order") + "/out.h5.partial", "h1");
  j.create();
  j.append(testing::ok_point(5, 64));
  j.append(testing::impossible_point(2, 32));
  j.append(testing::ok_point(9, 16));
  const auto pts = j.load();
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0].index, 2u);
  EXPECT_EQ(pts[1].index, 5u);
  EXPECT_EQ(pts[2].index, 9u);
}

TEST(PointJournal, DifferentSweepHashIsAConfigError) {
  const std::string dir = testing::scratch_dir("journal_hash") + "/out.h5.partial";
  PointJournal(dir, "h1").create();
  EXPECT_THROW(PointJournal(dir, "h2").load(), core::ConfigError);
}

TEST(PointJournal, LeftoverTemporaryIsIgnored) {
  const std::string dir = testing::scratch_dir("journal_tmp") + "/out.h5.partial";
  PointJournal j(dir, "h1");
  j.create();
  j.append(testing::ok_point(1, 64));
  std::ofstream(dir + "/point-2.rec.tmp") << "attnsim-point";  // as if killed mid-write
  EXPECT_EQ(j.load().size(), 1u);
}

TEST(PointJournal, RemoveDeletesDirectory) {
  const std::string dir = testing::scratch_dir("journal_rm") + "/out.h5.partial";
  PointJournal j(dir, "h1");
  j.create();
  j.append(testing::ok_point(1, 64));
  j.remove();
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace attnsim::io
