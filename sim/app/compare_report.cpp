#include "sim/app/compare_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <map>
#include <numeric>
#include <string_view>

namespace attnsim::app {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::string_view kTimeMetric = "gpu__time_duration.sum";

constexpr std::string_view kDramRead = "dram__bytes_read.sum";
constexpr std::string_view kDramWrite = "dram__bytes_write.sum";
constexpr std::string_view kDramTotal = "dram__bytes.sum";

constexpr std::array<std::string_view, 17> kMetricOrder = {
    kDramTotal,
    kDramRead,
    kDramWrite,
    "lts__t_bytes.sum",
    "lts__t_sector_hit_rate.pct",
    "gpu__time_duration.sum",
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__waves_per_multiprocessor",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
};

// Nsight Compute's dram__bytes.sum (reads + writes), derived where a side has both directions
// but not the total (kernels.csv and attnsim results carry the two directions).
std::map<std::string, double> with_dram_total(const std::map<std::string, double>& metrics) {
  std::map<std::string, double> m = metrics;
  const auto rd = m.find(std::string(kDramRead));
  const auto wr = m.find(std::string(kDramWrite));
  if (rd != m.end() && wr != m.end()) m.emplace(std::string(kDramTotal), rd->second + wr->second);
  return m;
}

std::size_t order_of(const std::string& m) {
  auto it = std::find(kMetricOrder.begin(), kMetricOrder.end(), m);
  return static_cast<std::size_t>(it - kMetricOrder.begin());
}

std::string format_value(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (std::fabs(v) >= 1000 && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

std::string format_pct(double rel, bool sign) {
  if (std::isnan(rel)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f%%" : "%.1f%%", rel * 100.0);
  return buf;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;  // ties share
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

bool CompareReport::metric_before(const std::string& a, const std::string& b) {
  const std::size_t oa = order_of(a);
  const std::size_t ob = order_of(b);
  if (oa != ob) return oa < ob;
  return a < b;
}

double CompareReport::target_for(const std::string& metric) {
  if (metric == kDramTotal || metric == kDramRead || metric == kDramWrite) return 0.10;
  if (metric == "lts__t_bytes.sum" || metric == kTimeMetric) return 0.20;
  if (metric.rfind("launch__occupancy_limit_", 0) == 0 || metric == "sm__maximum_warps_per_active_cycle_pct")
    return 0.0;
  return -1.0;
}

double CompareReport::median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

double CompareReport::spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return kNaN;
  const std::vector<double> ra = ranks(a);
  const std::vector<double> rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va == 0 || vb == 0) return kNaN;
  return cov / std::sqrt(va * vb);
}

MetricSummary CompareReport::summarize(const std::string& metric, const std::vector<MetricComparison>& rows) {
  MetricSummary s;
  s.metric = metric;
  std::vector<double> errors;
  double worst = -1;
  for (const auto& r : rows) {
    if (std::isnan(r.rel_error)) continue;
    const double e = std::fabs(r.rel_error);
    errors.push_back(e);
    if (e > worst) {
      worst = e;
      s.worst_where = r.label + " kernel " + std::to_string(r.kernel_index);
    }
  }
  s.count = errors.size();
  s.median_rel_error = median(errors);
  s.worst_rel_error = errors.empty() ? kNaN : worst;
  s.target = target_for(metric);
  // "Exact" holds for every kernel (the worst); percentage targets hold for the median. NaN
  // (no defined errors) meets no target.
  const double judged = s.target == 0 ? s.worst_rel_error : s.median_rel_error;
  s.target_met = s.target < 0 || judged <= s.target;
  return s;
}

CompareReport::CompareReport(const io::MeasuredTable& measured, const std::vector<SimulatedPoint>& simulated,
                             const MatchResult& matches) {
  std::vector<double> measured_time, simulated_time;
  for (const KernelMatch& m : matches.matches) {
    const io::MeasuredKernel& mk = measured.kernels[m.measured];
    const SimulatedPoint& sp = simulated[m.point];
    const SimulatedKernel& sk = sp.kernels[m.kernel];
    const std::map<std::string, double> measured_metrics = with_dram_total(mk.metrics);
    const std::map<std::string, double> simulated_metrics = with_dram_total(sk.metrics);
    std::vector<std::string> names;
    for (const auto& [name, value] : measured_metrics) {
      if (simulated_metrics.count(name)) names.push_back(name);
    }
    std::sort(names.begin(), names.end(), metric_before);
    for (const auto& name : names) {
      MetricComparison c;
      c.label = mk.workload.label.empty() ? mk.workload.variant : mk.workload.label;
      c.kernel_index = mk.kernel_index;
      c.measured_kernel = mk.kernel_name;
      c.simulated_kernel = sk.name;
      c.point = sp.index;
      c.metric = name;
      c.measured = measured_metrics.at(name);
      c.simulated = simulated_metrics.at(name);
      c.abs_error = c.simulated - c.measured;
      if (c.measured != 0) {
        c.rel_error = c.abs_error / std::fabs(c.measured);
      } else {
        c.rel_error = c.simulated == 0 ? 0.0 : kNaN;
      }
      if (name == kTimeMetric) {
        measured_time.push_back(c.measured);
        simulated_time.push_back(c.simulated);
      }
      rows_.push_back(std::move(c));
    }
  }
  std::vector<std::string> metrics;
  for (const auto& r : rows_) {
    if (std::find(metrics.begin(), metrics.end(), r.metric) == metrics.end()) metrics.push_back(r.metric);
  }
  std::sort(metrics.begin(), metrics.end(), metric_before);
  for (const auto& metric : metrics) {
    std::vector<MetricComparison> of_metric;
    for (const auto& r : rows_) {
      if (r.metric == metric) of_metric.push_back(r);
    }
    summary_.push_back(summarize(metric, of_metric));
  }
  time_rank_correlation_ = spearman(measured_time, simulated_time);
}

bool CompareReport::targets_met() const {
  const bool metrics_ok =
      std::all_of(summary_.begin(), summary_.end(), [](const MetricSummary& s) { return s.target_met; });
  return metrics_ok && (std::isnan(time_rank_correlation_) || time_rank_correlation_ >= 0.8);
}

void CompareReport::print(std::ostream& out) const {
  const std::string* last_kernel = nullptr;
  std::uint64_t last_index = 0;
  for (const auto& r : rows_) {
    if (!last_kernel || *last_kernel != r.label || last_index != r.kernel_index) {
      out << "\n" << r.label << "  kernel " << r.kernel_index << "  " << r.measured_kernel << "\n"
          << "  simulated: point " << r.point << ", " << r.simulated_kernel << "\n"
          << "  " << std::left << std::setw(52) << "metric" << std::right << std::setw(16) << "measured"
          << std::setw(16) << "simulated" << std::setw(16) << "error" << std::setw(10) << "rel" << "\n";
      last_kernel = &r.label;
      last_index = r.kernel_index;
    }
    out << "  " << std::left << std::setw(52) << r.metric << std::right << std::setw(16)
        << format_value(r.measured) << std::setw(16) << format_value(r.simulated) << std::setw(16)
        << format_value(r.abs_error) << std::setw(10) << format_pct(r.rel_error, true) << "\n";
  }
  out << "\nsummary: |relative error| over matched kernels\n"
      << "  " << std::left << std::setw(52) << "metric" << std::right << std::setw(5) << "n" << std::setw(10)
      << "median" << std::setw(10) << "worst" << std::setw(13) << "target" << "  worst at\n";
  for (const auto& s : summary_) {
    std::string target = "-";
    if (s.target == 0) target = "exact";
    if (s.target > 0) target = format_pct(s.target, false);
    if (s.target >= 0) target += s.target_met ? " ok" : " MISS";
    out << "  " << std::left << std::setw(52) << s.metric << std::right << std::setw(5) << s.count
        << std::setw(10) << format_pct(s.median_rel_error, false) << std::setw(10)
        << format_pct(s.worst_rel_error, false) << std::setw(13) << target << "  " << s.worst_where << "\n";
  }
  out << "time ranking (Spearman rho of gpu__time_duration.sum): ";
  if (std::isnan(time_rank_correlation_)) {
    out << "n/a\n";
  } else {
    out << std::fixed << std::setprecision(3) << time_rank_correlation_ << std::defaultfloat
        << (time_rank_correlation_ >= 0.8 ? " (target >= 0.8 ok)\n" : " (target >= 0.8 MISS)\n");
  }
}

}  // namespace attnsim::app
