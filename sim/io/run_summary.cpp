#include "sim/io/run_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/core/derived_metrics.h"
#include "sim/io/results_table.h"
#include "sim/io/table_printer.h"
#include "sim/io/workload_fields.h"

namespace attnsim::io {

namespace {

std::string bytes(core::Bytes b) { return TablePrinter::group_thousands(b); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// `v` with `digits` decimals.
std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

double metric(const core::Metrics& m, std::string_view name) {
  const core::Metric* x = core::find_metric(m, name);
  return x ? x->value : 0.0;
}

void print_summary(const core::RunResult& result, const core::DeviceSpec& device, std::ostream& out,
                   std::string_view block_rule) {
  const core::Metrics& m = result.metrics;
  auto line = [&out](std::string_view label, const std::string& text) {
    out << label << std::string(label.size() < 11 ? 11 - label.size() : 1, ' ') << text << "\n";
  };
  out << "summary (" << result.workload.kernel << " on " << device.name << ")\n";
  line("time", format_duration_ns(metric(m, "gpu__time_duration.sum")) +
                   (result.kernels.size() > 1
                        ? " (" + std::to_string(result.kernels.size()) +
                              (device.l2.carry_writeback ? " launches back to back)" : " launches, each timed alone)")
                        : ""));
  line("compute", fixed(metric(m, "attnsim__tflops"), 1) + " TFLOP/s = " +
                      fixed(metric(m, "attnsim__pct_peak_flops"), 1) + " % of peak (" +
                      fixed(core::peak_tflops(device), 1) + " TFLOP/s)");
  line("DRAM", fixed(metric(m, "attnsim__dram_gbps"), 1) + " GB/s = " + fixed(metric(m, "attnsim__pct_peak_dram"), 1) +
                   " % of peak (" + fixed(core::peak_dram_gbps(device), 0) + " GB/s)");
  // The busiest resource and the rule (docs/metrics-derived.md).
  std::string busy;
  for (const core::BoundResource& r : core::kBoundResources)
    busy += (busy.empty() ? "" : ", ") + std::string(r.name) + " " + fixed(metric(m, r.metric), 0) + " %";
  line("bound by", core::bound_of(m) + " (busy: " + busy + "; a resource bounds the run at >= " +
                       fixed(core::kBoundThresholdPct, 0) + " %, else latency)");
  if (const core::KernelResult* k = longest_launch(result)) {
    const core::Metrics& km = k->metrics;
    const double ctas = std::min<double>(
        {metric(km, "launch__occupancy_limit_registers"), metric(km, "launch__occupancy_limit_shared_mem"),
         metric(km, "launch__occupancy_limit_warps"), metric(km, "launch__occupancy_limit_blocks")});
    std::string occ = fixed(metric(km, "sm__warps_active.avg.pct_of_peak_sustained_active"), 1) +
                      " % achieved, " + fixed(metric(km, "sm__maximum_warps_per_active_cycle_pct"), 1) +
                      " % theoretical (" + TablePrinter::format_value(ctas) + " CTA" + (ctas == 1 ? "" : "s") +
                      " per SM), limited by " + k->occupancy_limiter + "; " +
                      fixed(metric(km, "launch__waves_per_multiprocessor"), 2) + " waves, tail " +
                      fixed(metric(km, "attnsim__tail_pct"), 1) + " %";
    if (result.kernels.size() > 1) occ += " (longest launch: " + k->name + ")";
    line("occupancy", occ);
  }
  if (metric(m, "attnsim__sim_mode") > 0) {
    // CTAs skipped whole are counted as their reference CTA; skipped loop steps are warmed.
    std::uint64_t skipped = 0, ctas = 0, ff = 0, extrapolated = 0;
    for (const core::KernelResult& k : result.kernels)
      skipped += k.totals.ctas_skipped, ctas += k.totals.ctas, ff += k.totals.ctas_fast_forwarded,
          extrapolated += k.totals.ctas_extrapolated;
    std::string whole = skipped == 0 ? "" : "; " + TablePrinter::format_value(static_cast<double>(skipped)) +
                                                " of " + TablePrinter::format_value(static_cast<double>(ctas)) +
                                                " CTAs skipped whole, counted as their reference CTA";
    if (ff > 0)
      whole += ", " + TablePrinter::format_value(static_cast<double>(ff)) + " more after their warm-up steps";
    if (extrapolated > 0)
      whole += "; the middle of " + TablePrinter::format_value(static_cast<double>(extrapolated)) +
               " CTAs' loops extrapolated, memory counts included";
    line("sampled", fixed(100.0 * metric(m, "attnsim__sampled_fraction"), 2) +
                        " % of the ops simulated (the rest: memory accesses warmed, time extrapolated" + whole +
                        "); estimated time error +-" + fixed(metric(m, "attnsim__sampling_error_pct"), 2) +
                        " % (sim.mode: sampled)");
  }
  for (const core::KernelResult& k : result.kernels)
    if (!k.totals.in_full_because.empty())
      line("", "in full" + (result.kernels.size() > 1 ? " (" + k.name + ")" : std::string()) + ": " +
                   std::string(k.totals.in_full_because) + " (docs/sampling.md)");
  if (!block_rule.empty()) {
    const core::Workload& w = result.workload;
    std::string blocks = "B_r = block_m = " + std::to_string(w.block_m) + ", B_c = block_n = " +
                         std::to_string(w.block_n);
    if (w.sram_bytes)
      blocks += ", M = sram_bytes = " + bytes(w.sram_bytes) + " B = " + bytes(w.sram_bytes / w.value_bytes()) +
                " elements";
    line("blocks", blocks);
    line("", std::string(block_rule));
  }
}

}  // namespace

std::string metric_unit(std::string_view name) {
  if (name == "gpu__time_duration.sum") return "ns";
  if (name == "attnsim__tflops") return "TFLOP/s";
  if (name == "attnsim__dram_gbps") return "GB/s";
  if (name == "attnsim__flops") return "FLOP";
  if (ends_with(name, ".per_second")) return "B/s";
  if (ends_with(name, ".pct") || ends_with(name, "_pct") || name.find("__pct_") != std::string_view::npos)
    return "%";
  if (name == "attnsim__cycles" || ends_with(name, "_cycles") || name == "attnsim__cycles_per_load") return "cycles";
  if (name.find("bytes") != std::string_view::npos || ends_with(name, "shared_mem_per_block")) return "B";
  return "";
}

std::string format_duration_ns(double ns) {
  const double a = std::fabs(ns);
  auto three = [](double v) { return fixed(v, v >= 100 ? 0 : v >= 10 ? 1 : 2); };
  if (a >= 1e9) return three(ns / 1e9) + " s";
  if (a >= 1e6) return three(ns / 1e6) + " ms";
  if (a >= 1e3) return three(ns / 1e3) + " \u00b5s";
  return three(ns) + " ns";
}

void print_run_summary(const core::RunResult& result, const core::DeviceSpec& device, std::ostream& out,
                       std::string_view block_rule) {
  print_summary(result, device, out, block_rule);
  out << "\ndevice: " << device.name << "\n";
  out << "workload:";
  for (const auto& f : workload_fields(result.workload)) {
    const Cell& v = f.value;
    const bool is_zero = std::holds_alternative<std::int64_t>(v) && std::get<std::int64_t>(v) == 0;
    if (!is_zero) out << " " << f.name << "=" << cell_to_string(v);
  }
  out << "\n\n";

  std::vector<std::string> header = {"metric", "unit"};
  for (const auto& k : result.kernels) header.push_back(k.name);
  header.push_back("total");
  TablePrinter metrics(header);
  for (const auto& m : result.metrics) {
    std::vector<std::string> row = {m.name, metric_unit(m.name)};
    for (const auto& k : result.kernels) {
      const core::Metric* km = core::find_metric(k.metrics, m.name);
      row.push_back(km ? TablePrinter::format_value(km->value) : "");
    }
    row.push_back(TablePrinter::format_value(m.value));
    metrics.add_row(std::move(row));
  }
  // Text-valued: what bounds each launch and the run, and each launch's occupancy limiter.
  std::vector<std::string> bound = {"attnsim__bound", ""}, limiter = {"attnsim__occupancy_limiter", ""};
  for (const auto& k : result.kernels) {
    bound.push_back(core::bound_of(k.metrics));
    limiter.push_back(k.occupancy_limiter);
  }
  bound.push_back(core::bound_of(result.metrics));
  metrics.add_row(std::move(bound));
  metrics.add_row(std::move(limiter));
  metrics.print(out);

  out << "\nbytes per tensor and level (B)\n";
  TablePrinter tensors({"tensor", "dram_read", "dram_write", "lts_read", "lts_write", "l1_read", "l1_write",
                        "smem_read", "smem_write"});
  const core::LevelTraffic& t = result.tensors;
  for (std::size_t i = 0; i < core::kNumTensors; ++i) {
    const auto x = static_cast<core::Tensor>(i);
    const core::TensorBytes z{};
    if (t.dram[x] == z && t.lts[x] == z && t.l1[x] == z && t.smem[x] == z) continue;
    tensors.add_row({std::string(core::to_string(x)), bytes(t.dram[x].read), bytes(t.dram[x].write),
                     bytes(t.lts[x].read), bytes(t.lts[x].write), bytes(t.l1[x].read), bytes(t.l1[x].write),
                     bytes(t.smem[x].read), bytes(t.smem[x].write)});
  }
  tensors.print(out);
  if (result.functional_max_rel_error)
    out << "\nfunctional: max_rel_error = " << TablePrinter::format_value(*result.functional_max_rel_error)
        << (result.functional_rmse ? ", rmse = " + TablePrinter::format_value(*result.functional_rmse) : std::string())
        << "\n";
}

}  // namespace attnsim::io
