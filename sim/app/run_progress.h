// The progress line of `attnsim run` on stderr, fed by the engine's EngineOptions::progress:
// which launch is running, its CTAs retired, events and the wall time so far. Silent for short
// runs: on a terminal one line, rewritten in place, once the run has taken `first_after`
// seconds (and erased at the end); elsewhere (a log) a line every `every` seconds after that.
#pragma once

#include <chrono>
#include <ostream>

#include "sim/engine/engine.h"

namespace attnsim::app {

class RunProgressPrinter {
 public:
  // `out` null: prints nothing. Seconds: first_after before the first line, every between lines.
  RunProgressPrinter(std::ostream* out, bool terminal, double first_after, double every);
  ~RunProgressPrinter() { finish(); }
  RunProgressPrinter(const RunProgressPrinter&) = delete;
  RunProgressPrinter& operator=(const RunProgressPrinter&) = delete;

  // With the wall time since construction.
  void operator()(const engine::LaunchProgress& p);
  // With `elapsed` seconds given (tests).
  void update(const engine::LaunchProgress& p, double elapsed);
  // Erases the terminal line, if one was printed (idempotent).
  void finish();

 private:
  std::ostream* out_;
  bool terminal_;
  double first_after_, every_;
  double last_ = -1;        // elapsed time of the last line, -1 = none yet
  std::size_t width_ = 0;   // length of the terminal line on screen (0: none)
  std::chrono::steady_clock::time_point start_;
};

}  // namespace attnsim::app
