// What a command run in-process (the Python module's cli() and check()) gets in place of the
// process's: a stop flag its long loops poll, and the stream its progress reports go to. The
// attnsim binary sets none (Ctrl-C ends the process, or SigintFlag stops a sweep).
#pragma once

#include <atomic>
#include <ostream>
#include <stdexcept>

namespace attnsim::app {

// Thrown where a command or run saw its stop flag set (the caller asked it to stop).
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

struct CommandContext {
  const std::atomic<bool>* interrupt = nullptr;  // set: stop soon by throwing Interrupted; null: never
  std::ostream* progress = nullptr;              // progress reports; null: std::cerr
  bool progress_is_terminal = false;             // with `progress`: one line rewritten with '\r'
};

// The calling thread's context (all null unless a ScopedCommandContext lives on this thread). A
// command that runs work on other threads hands its context to them.
const CommandContext& command_context();

class ScopedCommandContext {
 public:
  explicit ScopedCommandContext(const CommandContext& context);  // this thread's, until destroyed
  ~ScopedCommandContext();
  ScopedCommandContext(const ScopedCommandContext&) = delete;
  ScopedCommandContext& operator=(const ScopedCommandContext&) = delete;

 private:
  CommandContext previous_;
};

// Throws Interrupted when `flag` is set (null: never).
inline void throw_if_interrupted(const std::atomic<bool>* flag) {
  if (flag && flag->load(std::memory_order_relaxed)) throw Interrupted();
}

// Throws Interrupted when this thread's context asks to stop.
inline void throw_if_interrupted() { throw_if_interrupted(command_context().interrupt); }

}  // namespace attnsim::app
