// The progress line of `attnsim run` (sim/app/run_progress.h): silent before first_after, then at
// most one line per `every` seconds; on a terminal rewritten in place and erased at the end, in a
// log one line each.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/app/run_progress.h"

namespace attnsim::app {
namespace {

engine::LaunchProgress at(std::size_t launch, std::uint64_t retired, std::uint64_t events) {
  engine::LaunchProgress p;
  p.launch = launch;
  p.launches = 3;
  p.name = launch == 0 ? "standard_qk" : "standard_softmax";
  p.ctas_retired = retired;
  p.ctas = 4096;
  p.events = events;
  return p;
}

TEST(RunProgress, LogLinesStartAfterFirstAfterAndComeAtMostEveryPeriod) {
  std::ostringstream os;
  RunProgressPrinter printer(&os, false, 10.0, 10.0);
  printer.update(at(0, 100, 1'000'000), 9.9);
  EXPECT_EQ(os.str(), "");  // a short run prints nothing
  printer.update(at(0, 1024, 2'500'000), 10.2);
  EXPECT_EQ(os.str(), "attnsim run: standard_qk launch 1/3: 1024 of 4096 CTAs (25 %), 2.5 M events, 10 s\n");
  printer.update(at(0, 2048, 3'000'000), 19.0);  // 8.8 s after the last line: not yet
  printer.update(at(1, 4096, 7'250'000), 20.3);
  printer.finish();
  EXPECT_EQ(os.str(),
            "attnsim run: standard_qk launch 1/3: 1024 of 4096 CTAs (25 %), 2.5 M events, 10 s\n"
            "attnsim run: standard_softmax launch 2/3: 4096 of 4096 CTAs (100 %), 7.2 M events, 20 s\n");
}

TEST(RunProgress, TerminalLineIsRewrittenInPlaceAndErasedAtTheEnd) {
  const std::string first = "attnsim run: standard_softmax launch 2/3: 4095 of 4096 CTAs (100 %), 12.0 M events, 2 s";
  const std::string second = "attnsim run: standard_qk launch 1/3: 7 of 4096 CTAs (0 %), 0.1 M events, 2 s";
  ASSERT_LT(second.size(), first.size());
  std::ostringstream os;
  {
    RunProgressPrinter printer(&os, true, 1.0, 0.25);
    printer.update(at(0, 7, 1), 0.9);  // before first_after: nothing
    EXPECT_EQ(os.str(), "");
    printer.update(at(1, 4095, 12'000'000), 1.5);
    EXPECT_EQ(os.str(), "\r" + first);
    printer.update(at(0, 7, 1), 1.6);  // within 0.25 s of the last line: nothing
    EXPECT_EQ(os.str(), "\r" + first);
    printer.update(at(0, 7, 100'000), 1.8);  // the shorter line pads over the longer one
    EXPECT_EQ(os.str(), "\r" + first + "\r" + second + std::string(first.size() - second.size(), ' '));
    os.str("");
  }  // the destructor erases the line on screen
  EXPECT_EQ(os.str(), "\r" + std::string(second.size(), ' ') + "\r");
}

TEST(RunProgress, NothingToEraseWhenNothingWasPrinted) {
  std::ostringstream os;
  RunProgressPrinter printer(&os, true, 1.0, 0.25);
  printer.update(at(0, 1, 1), 0.5);
  printer.finish();
  EXPECT_EQ(os.str(), "");
}

}  // namespace
}  // namespace attnsim::app
