#include "sim/app/sigint_flag.h"

#include <signal.h>

#include "sim/io/durable_write.h"

namespace attnsim::app {

namespace {

std::atomic<bool> g_raised{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the flag is set from a signal handler");
struct sigaction g_previous;

// Removes the temporaries, then dies of `sig`: the default action once this handler returns
// (`sig` is blocked while it runs, so the raise stays pending until then).
void die_of(int sig) {
  attnsim::io::remove_live_temporaries();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

extern "C" void on_sigint(int sig) {
  if (!g_raised.exchange(true)) return;  // the first: finish what is in flight
  die_of(sig);                           // the second: at once
}

extern "C" void on_fatal_signal(int sig) { die_of(sig); }

}  // namespace

SigintFlag::SigintFlag() {
  g_raised.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_previous);
}

SigintFlag::~SigintFlag() { sigaction(SIGINT, &g_previous, nullptr); }

const std::atomic<bool>& SigintFlag::raised() const { return g_raised; }

void remove_temporaries_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: stay ignored
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace attnsim::app
