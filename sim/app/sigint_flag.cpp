#include "sim/app/sigint_flag.h"

#include <signal.h>

namespace attnsim::app {

namespace {

std::atomic<bool> g_raised{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the flag is set from a signal handler");
struct sigaction g_previous;

extern "C" void on_sigint(int) { g_raised.store(true); }

}  // namespace

SigintFlag::SigintFlag() {
  g_raised.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;  // the second SIGINT takes the default action: terminate
  sigaction(SIGINT, &sa, &g_previous);
}

SigintFlag::~SigintFlag() { sigaction(SIGINT, &g_previous, nullptr); }

const std::atomic<bool>& SigintFlag::raised() const { return g_raised; }

}  // namespace attnsim::app
