#include "sim/app/run_progress.h"

#include <cstdio>
#include <string>

namespace attnsim::app {

RunProgressPrinter::RunProgressPrinter(std::ostream* out, bool terminal, double first_after, double every)
    : out_(out), terminal_(terminal), first_after_(first_after), every_(every),
      start_(std::chrono::steady_clock::now()) {}

void RunProgressPrinter::operator()(const engine::LaunchProgress& p) {
  update(p, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

void RunProgressPrinter::update(const engine::LaunchProgress& p, double elapsed) {
  if (!out_ || elapsed < first_after_ || (last_ >= 0 && elapsed - last_ < every_)) return;
  last_ = elapsed;
  const double pct = p.ctas ? 100.0 * static_cast<double>(p.ctas_retired) / static_cast<double>(p.ctas) : 100.0;
  char text[160];
  std::snprintf(text, sizeof text, "launch %zu/%zu: %llu of %llu CTAs (%.0f %%), %.1f M events, %.0f s", p.launch + 1,
                p.launches, static_cast<unsigned long long>(p.ctas_retired), static_cast<unsigned long long>(p.ctas),
                pct, static_cast<double>(p.events) / 1e6, elapsed);
  const std::string line = "attnsim run: " + std::string(p.name) + " " + text;
  if (terminal_) {
    // Pad over a longer previous line; no newline until finish().
    *out_ << '\r' << line << std::string(width_ > line.size() ? width_ - line.size() : 0, ' ') << std::flush;
    width_ = line.size();
  } else {
    *out_ << line << '\n' << std::flush;
  }
}

void RunProgressPrinter::finish() {
  if (!out_ || width_ == 0) return;
  *out_ << '\r' << std::string(width_, ' ') << '\r' << std::flush;
  width_ = 0;
}

}  // namespace attnsim::app
