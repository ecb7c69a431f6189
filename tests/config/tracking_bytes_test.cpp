// The l2.tracking_bytes key (block model, docs/performance.md): accepted values and the errors
// for the others, each naming the key.
#include <gtest/gtest.h>

#include <string>

#include "sim/config/device_loader.h"
#include "sim/core/errors.h"

namespace attnsim::config {
namespace {

std::string error_of(const std::string& value) {
  try {
    load_device("h200", {{"l2.tracking_bytes", value}});
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(e.problems().size(), 1u) << e.what();
    if (!e.problems().empty()) {
      EXPECT_EQ(e.problems()[0].key_path, "--set device.l2.tracking_bytes");
    }
    return e.what();
  }
  return "";
}

TEST(TrackingBytes, DefaultIsTheLineModel) { EXPECT_EQ(load_device("h200").l2.tracking_bytes, 0u); }

TEST(TrackingBytes, AcceptsPowersOfTwoFromTheLineToSixtyFourSectors) {
  for (const char* v : {"0", "128", "256", "1024", "2 KiB"}) EXPECT_EQ(error_of(v), "") << v;
  EXPECT_EQ(load_device("h200", {{"l2.tracking_bytes", "1 KiB"}}).l2.tracking_bytes, 1024u);
}

TEST(TrackingBytes, RejectsOtherValues) {
  EXPECT_NE(error_of("1000").find("must be 0 or a power of two"), std::string::npos);
  EXPECT_NE(error_of("64").find("must be at least line_bytes (128)"), std::string::npos);
  EXPECT_NE(error_of("4096").find("must be at most 64 sectors (2048 bytes)"), std::string::npos);
  EXPECT_NE(error_of("-1").find("tracking_bytes"), std::string::npos);
}

TEST(TrackingBytes, CapacityMustHoldWholeSetsOfUnits) {
  try {  // 96 KiB over 2 partitions of 16-way sets of 2 KiB units (64 KiB) leaves a partial set
    load_device("h200", {{"l2.capacity_bytes", "96 KiB"}, {"l2.tracking_bytes", "2048"}});
    FAIL();
  } catch (const core::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("capacity_bytes must be a multiple of tracking_bytes"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace attnsim::config
