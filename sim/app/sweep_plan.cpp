#include "sim/app/sweep_plan.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "sim/config/sweep_expander.h"
#include "sim/core/errors.h"
#include "sim/io/table_printer.h"

namespace attnsim::app {

namespace {

std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

SweepPlan plan_sweep(const config::SweepExpander& expander, const SweepPlanOptions& o) {
  SweepPlan plan;
  plan.total = expander.size();
  for (std::uint64_t i = o.shard_index; i < expander.size(); i += std::max<std::uint64_t>(1, o.shard_count)) {
    const config::SweepPoint p = expander.point(i);
    PlanRow row;
    row.index = p.index;
    row.params = p.params;
    row.reason = p.reason;
    row.ok = p.possible && p.device;
    if (row.ok) {
      try {  // what run_workload checks before it runs: the kernel's own refusals, the memory guard
        row.estimate = estimate_run(kernels::make_program(p.workload, *p.device), *p.device);
        const double peak = row.estimate.peak_memory_bytes();
        if (o.max_memory_bytes > 0 && peak > static_cast<double>(o.max_memory_bytes)) {
          row.ok = false;
          row.reason = "estimated peak memory " + format_bytes(peak) + " exceeds the limit of " +
                       format_bytes(static_cast<double>(o.max_memory_bytes));
        }
      } catch (const core::ConfigError& err) {
        row.ok = false;
        row.reason = err.what();
      }
    }
    if (!row.ok) row.estimate = {};
    plan.rows.push_back(std::move(row));
  }
  return plan;
}

std::uint64_t print_sweep_plan(const config::SweepSpec& spec, const config::SweepExpander& expander,
                               const SweepPlanOptions& o, std::ostream& out) {
  const SweepPlan plan = plan_sweep(expander, o);
  const std::vector<PlanRow>& rows = plan.rows;
  std::vector<std::string> header = {"point"};
  if (!rows.empty())
    for (const auto& [name, value] : rows.front().params) header.push_back(name);
  for (const char* h : {"status", "tile ops", "CTAs", "peak memory", "reason"}) header.emplace_back(h);
  io::TablePrinter table(header);

  std::uint64_t ok = 0, largest_point = 0;
  double ops = 0, largest = 0, peak = 0;
  for (const PlanRow& r : rows) {
    std::vector<std::string> cells = {std::to_string(r.index)};
    for (const auto& [name, value] : r.params) cells.push_back(config::sweep_value_yaml(value));
    if (r.ok) {
      ++ok;
      ops += r.estimate.events;
      peak = std::max(peak, r.estimate.peak_memory_bytes());
      if (r.estimate.events > largest) {
        largest = r.estimate.events;
        largest_point = r.index;
      }
      for (std::string cell : {std::string("ok"), three_digits(r.estimate.events),
                               io::TablePrinter::group_thousands(static_cast<std::uint64_t>(r.estimate.ctas)),
                               format_bytes(r.estimate.peak_memory_bytes()), std::string()})
        cells.push_back(std::move(cell));
    } else {
      for (std::string cell : {std::string("impossible"), std::string(), std::string(), std::string(), r.reason})
        cells.push_back(std::move(cell));
    }
    table.add_row(std::move(cells));
  }

  out << "sweep " << (spec.name.empty() ? o.file : spec.name) << ": " << plan.total << " points";
  if (o.shard_count > 1) out << ", " << rows.size() << " in shard " << o.shard_index << "/" << o.shard_count;
  out << " (--dry-run: nothing is run or written)\n";
  table.print(out);
  out << ok << " ok, " << rows.size() - ok << " impossible";
  if (ok > 0) {
    out << "; " << three_digits(ops) << " tile ops in all (a full run's; sampled mode simulates part of them), "
        << "the most " << three_digits(largest) << " at point " << largest_point << "; peak memory per point up to "
        << format_bytes(peak);
    if (o.max_memory_bytes > 0) out << " (limit " << format_bytes(static_cast<double>(o.max_memory_bytes)) << ")";
  }
  out << "\n";
  return rows.size();
}

}  // namespace attnsim::app
