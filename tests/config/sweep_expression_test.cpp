#include "sim/config/sweep_expression.h"

#include <gtest/gtest.h>

#include <map>

namespace attnsim::config {
namespace {

std::int64_t eval(const std::string& text, const std::map<std::string, std::int64_t>& env = {}) {
  return SweepExpression(text).evaluate([&](const std::string& n) -> std::optional<std::int64_t> {
    auto it = env.find(n);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

TEST(SweepExpression, MultiplicationBindsTighterThanAddition) { EXPECT_EQ(eval("2 + 3 * 4"), 14); }

TEST(SweepExpression, ComparisonAndLogicYieldZeroOrOne) {
  EXPECT_EQ(eval("block_n <= block_m and not (block_m > 256)", {{"block_m", 128}, {"block_n", 64}}), 1);
  EXPECT_EQ(eval("block_n <= block_m or false", {{"block_m", 64}, {"block_n", 128}}), 0);
}

TEST(SweepExpression, IntegerDivisionTruncates) { EXPECT_EQ(eval("7 / 2 + 7 % 2 - -1"), 5); }

TEST(SweepExpression, DottedKeyNamesAreNames) {
  EXPECT_EQ(eval("device.l2.capacity_bytes / 1024", {{"device.l2.capacity_bytes", 4096}}), 4);
}

TEST(SweepExpression, DivisionByZeroThrowsDomainError) { EXPECT_THROW(eval("1 / (2 - 2)"), std::domain_error); }

TEST(SweepExpression, UnknownNameThrowsDomainError) { EXPECT_THROW(eval("seq_q * 2"), std::domain_error); }

TEST(SweepExpression, TrailingOperatorIsSyntaxError) {
  EXPECT_THROW(SweepExpression("block_m <="), std::invalid_argument);
  EXPECT_THROW(SweepExpression("(1 + 2"), std::invalid_argument);
  EXPECT_THROW(SweepExpression("1 $ 2"), std::invalid_argument);
}

TEST(SweepExpression, NamesListsEachKeyOnce) {
  const SweepExpression e("a + b * a");
  ASSERT_EQ(e.names().size(), 2u);
  EXPECT_EQ(e.names()[0], "a");
  EXPECT_EQ(e.names()[1], "b");
}

}  // namespace
}  // namespace attnsim::config
