#include "sim/app/sweep_plan.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/app/run_estimate.h"
#include "sim/config/sweep_expander.h"
#include "sim/core/errors.h"
#include "sim/io/table_printer.h"
#include "kernels/registry.h"

namespace attnsim::app {

namespace {

std::string three_digits(double events) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", events);
  return buf;
}

}  // namespace

std::uint64_t print_sweep_plan(const config::SweepSpec& spec, const SweepPlanOptions& o, std::ostream& out) {
  const config::SweepExpander expander(spec);  // ConfigError here: a bad sweep, as `sweep` says
  std::vector<config::SweepPoint> points;
  for (std::uint64_t i = o.shard_index; i < expander.size(); i += std::max<std::uint64_t>(1, o.shard_count))
    points.push_back(expander.point(i));

  std::vector<std::string> header = {"point"};
  if (!points.empty())
    for (const auto& [name, value] : points.front().params) header.push_back(name);
  for (const char* h : {"status", "tile ops", "CTAs", "peak memory", "reason"}) header.emplace_back(h);
  io::TablePrinter table(header);

  std::uint64_t ok = 0, impossible = 0, largest_point = 0;
  double events = 0, largest = 0, peak = 0;
  for (const config::SweepPoint& p : points) {
    std::vector<std::string> row = {std::to_string(p.index)};
    for (const auto& [name, value] : p.params) row.push_back(config::sweep_value_yaml(value));
    std::string reason = p.reason;
    RunEstimate e;
    bool possible = p.possible && p.device;
    if (possible) {
      try {  // what run_workload checks before it runs: the kernel's own refusals, the memory guard
        e = estimate_run(kernels::make_program(p.workload, *p.device), *p.device);
        if (o.max_memory_bytes > 0 && e.peak_memory_bytes() > static_cast<double>(o.max_memory_bytes)) {
          possible = false;
          reason = "estimated peak memory " + format_bytes(e.peak_memory_bytes()) + " exceeds the limit of " +
                   format_bytes(static_cast<double>(o.max_memory_bytes));
        }
      } catch (const core::ConfigError& err) {
        possible = false;
        reason = err.what();
      }
    }
    if (possible) {
      ++ok;
      events += e.events;
      peak = std::max(peak, e.peak_memory_bytes());
      if (e.events > largest) {
        largest = e.events;
        largest_point = p.index;
      }
      for (const std::string& cell : {std::string("ok"), three_digits(e.events),
                                      io::TablePrinter::group_thousands(static_cast<std::uint64_t>(e.ctas)),
                                      format_bytes(e.peak_memory_bytes()), std::string()})
        row.push_back(cell);
    } else {
      ++impossible;
      for (const std::string& cell : {std::string("impossible"), std::string(), std::string(), std::string(), reason})
        row.push_back(cell);
    }
    table.add_row(std::move(row));
  }

  out << "sweep " << (spec.name.empty() ? o.file : spec.name) << ": " << expander.size() << " points";
  if (o.shard_count > 1) out << ", " << points.size() << " in shard " << o.shard_index << "/" << o.shard_count;
  out << " (--dry-run: nothing is run or written)\n";
  table.print(out);
  out << ok << " ok, " << impossible << " impossible";
  if (ok > 0) {
    out << "; " << three_digits(events) << " tile ops in all (a full run's; sampled mode simulates part of them), "
        << "the most " << three_digits(largest) << " at point " << largest_point
        << "; peak memory per point up to " << format_bytes(peak);
    if (o.max_memory_bytes > 0) out << " (limit " << format_bytes(static_cast<double>(o.max_memory_bytes)) << ")";
  }
  out << "\n";
  return points.size();
}

}  // namespace attnsim::app
