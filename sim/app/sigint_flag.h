// SIGINT as a flag a long command polls: the first Ctrl-C sets it (the command finishes what is in
// flight and exits 130); a second Ctrl-C removes the output temporaries being written and kills at
// once. Also the process-wide handlers that remove those temporaries (io::remove_live_temporaries)
// when SIGINT, SIGTERM or SIGHUP ends the process. SIGKILL cannot be caught: a temporary it leaves
// ("<out>.tmp-<pid>") is removed by the next sweep writing that output.
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

// Installs handlers for SIGINT, SIGTERM and SIGHUP (where they are not ignored) that remove the
// live output temporaries, then end the process by the same signal (exit status as before). Called
// once by main(); a SigintFlag overrides SIGINT while it lives.
void remove_temporaries_on_signals();

}  // namespace attnsim::app
