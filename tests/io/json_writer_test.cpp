#include "sim/io/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

namespace attnsim::io {
namespace {

std::string compact(void (*fill)(JsonWriter&)) {
  std::ostringstream s;
  JsonWriter j(s, 0);
  fill(j);
  j.finish();
  return s.str();
}

TEST(JsonWriter, IntegralDoublePrintsAsInteger) {
  EXPECT_EQ(JsonWriter::format_number(33554432.0), "33554432");
  EXPECT_EQ(JsonWriter::format_number(-7.0), "-7");
  EXPECT_EQ(JsonWriter::format_number(0.0), "0");
}

TEST(JsonWriter, FractionRoundTripsExactly) {
  const double v = 0.1 + 0.2;  // 0.30000000000000004, not 0.3
  const std::string s = JsonWriter::format_number(v);
  EXPECT_EQ(std::stod(s), v);
  EXPECT_EQ(s, "0.30000000000000004");
}

TEST(JsonWriter, NonFiniteNumberPrintsNull) {
  EXPECT_EQ(JsonWriter::format_number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(JsonWriter::format_number(std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonWriter, LargeUnsignedPrintsAllDigits) {
  const std::string s = compact([](JsonWriter& j) { j.value(std::uint64_t{1} << 60); });
  EXPECT_EQ(s, "1152921504606846976\n");
}

TEST(JsonWriter, StringsAreEscaped) {
  EXPECT_EQ(JsonWriter::quote("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
}

TEST(JsonWriter, KeysKeepInsertionOrder) {
  const std::string s = compact([](JsonWriter& j) {
    j.begin_object();
    j.key("z");
    j.value(1);
    j.key("a");
    j.begin_array();
    j.value(true);
    j.null();
    j.end_array();
    j.key("m");
    j.begin_object();
    j.end_object();
    j.end_object();
  });
  EXPECT_EQ(s, "{\"z\":1,\"a\":[true,null],\"m\":{}}\n");
}

TEST(JsonWriter, ValueWithoutKeyInObjectThrows) {
  std::ostringstream s;
  JsonWriter j(s);
  j.begin_object();
  EXPECT_THROW(j.value(1), std::logic_error);
}

TEST(JsonWriter, UnclosedContainerFailsFinish) {
  std::ostringstream s;
  JsonWriter j(s);
  j.begin_array();
  EXPECT_THROW(j.finish(), std::logic_error);
}

}  // namespace
}  // namespace attnsim::io
