// SIGINT as a flag a long command polls: the first Ctrl-C sets it (the command finishes what is in
// flight and exits 130); the handler then reverts to the default, so a second Ctrl-C kills at once.
// Leaves out other signals (SIGKILL cannot be caught; crash safety comes from the sweep journal).
#pragma once

#include <atomic>

namespace attnsim::app {

class SigintFlag {
 public:
  SigintFlag();   // installs the handler (one SigintFlag at a time)
  ~SigintFlag();  // restores the previous handler
  SigintFlag(const SigintFlag&) = delete;
  SigintFlag& operator=(const SigintFlag&) = delete;

  const std::atomic<bool>& raised() const;
};

}  // namespace attnsim::app
