// The op timeline of traced CTAs for `attnsim run --trace`: the CTA list, the rows, TSV and
// Chrome trace output.
#include "sim/app/run_trace.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "sim/core/errors.h"
#include "sim/core/tile_op.h"
#include "sim/io/json_writer.h"
#include "sim/io/output_target.h"
#include "sim/io/table_printer.h"

namespace attnsim::app {

namespace {

[[noreturn]] void bad(const std::string& flag, const std::string& message) {
  throw core::ConfigError(core::ConfigProblem{"", 0, flag, message});
}

std::uint64_t parse_index(const std::string& s, const std::string& flag, const std::string& text) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
    bad(flag, "'" + text + "' is not a list of CTA indices such as 0,5,100-103");
  return std::stoull(s);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string op_detail(const core::TileOp& op) {
  using core::OpKind;
  std::ostringstream os;
  switch (op.kind) {
    case OpKind::kLoad:
    case OpKind::kStore:
      os << op.rows << "x" << op.row_bytes << " B" << (op.bulk ? " tma" : op.async ? " async" : "");
      break;
    case OpKind::kSharedRead:
    case OpKind::kSharedWrite:
      os << op.rows << "x" << op.row_bytes << " B" << (op.async ? " ahead" : "");
      break;
    case OpKind::kMma:
      os << op.m << "x" << op.n << "x" << op.k << " " << core::to_string(op.flavour) << (op.async ? " async" : "");
      break;
    case OpKind::kExp:
    case OpKind::kElementwise:
    case OpKind::kIssue:
      os << op.count << " thread instructions";
      if (op.m > 0) os << ", at least " << op.m << " cycles";
      break;
    case OpKind::kWait:
    case OpKind::kMmaWait:
      os << "until <= " << op.count << " groups pending";
      break;
    case OpKind::kMbarArrive:
    case OpKind::kMbarWait:
    case OpKind::kNamedSync:
    case OpKind::kNamedArrive:
      os << "barrier " << static_cast<unsigned>(op.barrier);
      break;
    case OpKind::kBarrier:
    case OpKind::kCommit:
    case OpKind::kMmaCommit:
      break;
  }
  return os.str();
}

bool memory_op(core::OpKind k) {
  return k == core::OpKind::kLoad || k == core::OpKind::kStore || k == core::OpKind::kSharedRead ||
         k == core::OpKind::kSharedWrite;
}

}  // namespace

std::vector<std::uint64_t> parse_cta_list(const std::string& text, const std::string& flag) {
  std::vector<std::uint64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto dash = item.find('-');
    const std::uint64_t a = parse_index(item.substr(0, dash), flag, text);
    const std::uint64_t b = dash == std::string::npos ? a : parse_index(item.substr(dash + 1), flag, text);
    if (b < a) bad(flag, "range " + item + " runs backwards");
    if (b - a >= kMaxTracedCtas || out.size() + (b - a + 1) > kMaxTracedCtas)
      bad(flag, "at most " + std::to_string(kMaxTracedCtas) + " CTAs can be traced");
    for (std::uint64_t c = a; c <= b; ++c) out.push_back(c);
  }
  if (out.empty() || text.back() == ',') bad(flag, "'" + text + "' is not a list of CTA indices such as 0,5,100-103");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void check_traced_ctas(const std::vector<std::uint64_t>& ctas, const core::TileProgram& program,
                       const std::string& flag) {
  std::uint64_t largest = 0;
  for (const auto& l : program.launches) largest = std::max(largest, l->shape().num_ctas());
  if (!ctas.empty() && ctas.back() >= largest)
    bad(flag, "CTA " + std::to_string(ctas.back()) + " is in no launch: the largest grid has " +
                  std::to_string(largest) + " CTAs (0-" + std::to_string(largest == 0 ? 0 : largest - 1) + ")");
}

void TraceCollector::add(const engine::TraceRecord& r) {
  if (launch_names_.size() <= r.launch) launch_names_.resize(r.launch + 1);
  if (launch_names_[r.launch].empty()) launch_names_[r.launch] = std::string(r.launch_name);
  rows_.push_back(Row{r.launch, r.cta, r.step, r.sm, r.group, r.op_index, r.op ? *r.op : core::TileOp{}, r.skipped,
                      r.start, r.end, r.ready});
}

namespace {
// The kind and detail of a skipped record, by TraceRecord::Skipped (kNo: none).
struct SkippedText {
  const char* kind;
  const char* detail;
};
constexpr SkippedText kSkippedText[] = {
    {nullptr, nullptr},
    {"skipped_step", "sampled: time from the measured steps, accesses warmed"},
    {"skipped_cta", "sampled: counted as its reference CTA"},
};
const SkippedText& skipped_text(engine::TraceRecord::Skipped s) { return kSkippedText[static_cast<int>(s)]; }
}  // namespace

std::string TraceCollector::kind(const Row& r) {
  const char* k = skipped_text(r.skipped).kind;
  return k ? std::string(k) : std::string(core::to_string(r.op.kind));
}

std::string TraceCollector::detail(const Row& r) {
  const char* d = skipped_text(r.skipped).detail;
  return d ? std::string(d) : op_detail(r.op);
}

bool TraceCollector::memory(const Row& r) {
  return r.skipped == engine::TraceRecord::Skipped::kNo && memory_op(r.op.kind);
}

std::string TraceCollector::tsv(double clock_ghz) const {
  std::ostringstream os;
  os << "launch\tkernel\tcta\tsm\tgroup\tstep\top\tkind\ttensor\tdetail\tbytes\tstart_cycles\tend_cycles\t"
        "ready_cycles\tstart_us\tend_us\n";
  const double per_us = clock_ghz * 1e3;  // cycles per µs
  for (const Row& r : rows_) {
    const bool mem = memory(r);
    os << r.launch << '\t' << launch_names_[r.launch] << '\t' << r.cta << '\t' << r.sm << '\t' << r.group << '\t'
       << r.step << '\t' << r.op_index << '\t' << kind(r) << '\t' << (mem ? core::to_string(r.op.tensor) : "")
       << '\t' << detail(r) << '\t' << (mem ? r.op.bytes() : 0) << '\t' << fixed(r.start, 1) << '\t' << fixed(r.end, 1) << '\t'
       << fixed(r.ready, 1) << '\t' << fixed(r.start / per_us, 4) << '\t' << fixed(r.end / per_us, 4) << '\n';
  }
  return os.str();
}

std::string TraceCollector::chrome_json(double clock_ghz, const std::string& device) const {
  std::ostringstream os;
  io::JsonWriter j(os, 0);
  const double per_us = clock_ghz * 1e3;
  j.begin_object();
  j.key("displayTimeUnit");
  j.value("ns");
  j.key("otherData");
  j.begin_object();
  j.key("device");
  j.value(device);
  j.key("clock_ghz");
  j.value(clock_ghz);
  j.end_object();
  j.key("traceEvents");
  j.begin_array();
  auto kv = [&j](std::string_view k, const auto& v) {
    j.key(k);
    j.value(v);
  };
  // Names: a process per launch, a thread per (CTA, group), in order of first appearance.
  std::vector<std::pair<std::size_t, std::uint64_t>> named;  // (launch, tid); tid ~0: the process
  constexpr std::uint64_t kProcess = ~std::uint64_t{0};
  auto name_once = [&](std::size_t launch, std::uint64_t tid, const std::string& name) {
    if (std::find(named.begin(), named.end(), std::make_pair(launch, tid)) != named.end()) return;
    named.emplace_back(launch, tid);
    j.begin_object();
    kv("ph", "M");
    kv("name", tid == kProcess ? "process_name" : "thread_name");
    kv("pid", std::uint64_t{launch});
    if (tid != kProcess) kv("tid", tid);
    j.key("args");
    j.begin_object();
    kv("name", name);
    j.end_object();
    j.end_object();
  };
  for (const Row& r : rows_) {
    const std::uint64_t tid = r.cta * 256 + r.group;
    const std::string name = kind(r);
    const bool mem = memory(r);
    name_once(r.launch, kProcess, std::to_string(r.launch) + " " + launch_names_[r.launch]);
    name_once(r.launch, tid,
              "CTA " + std::to_string(r.cta) + " group " + std::to_string(r.group) + " (SM " + std::to_string(r.sm) + ")");
    j.begin_object();
    kv("name", mem ? name + " " + std::string(core::to_string(r.op.tensor)) : name);
    kv("cat", name);
    kv("ph", "X");
    kv("ts", r.start / per_us);
    kv("dur", (r.end - r.start) / per_us);
    kv("pid", std::uint64_t{r.launch});
    kv("tid", tid);
    j.key("args");
    j.begin_object();
    kv("step", r.step);
    kv("op", r.op_index);
    kv("detail", detail(r));
    if (mem && r.op.bytes()) kv("bytes", r.op.bytes());
    if (r.ready > 0) kv("ready_us", r.ready / per_us);
    j.end_object();
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.finish();
  return os.str();
}

std::string TraceCollector::summary(std::size_t lines) const {
  // The share of a group's span per activity, in the figure's lanes' terms.
  auto activity = [](const Row& r) -> const char* {
    if (r.skipped != engine::TraceRecord::Skipped::kNo) return "skipped (sampled)";
    switch (r.op.kind) {
      case core::OpKind::kLoad:
      case core::OpKind::kStore:
        return "global loads/stores";
      case core::OpKind::kMma:
        return "MMA";
      case core::OpKind::kSharedRead:
      case core::OpKind::kSharedWrite:
        return "shared memory";
      case core::OpKind::kExp:
        return "SFU";
      case core::OpKind::kElementwise:
      case core::OpKind::kIssue:
        return "FP32/issue";
      default:
        return "waits (async groups, barriers)";
    }
  };
  struct Group {
    std::size_t launch;
    std::uint64_t cta;
    std::uint32_t group;
    double first, last;
    std::vector<std::pair<std::string, double>> by;
  };
  std::vector<Group> groups;  // in order of first appearance
  for (const Row& r : rows_) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) {
      return x.launch == r.launch && x.cta == r.cta && x.group == r.group;
    });
    if (g == groups.end()) g = groups.insert(groups.end(), Group{r.launch, r.cta, r.group, r.start, r.end, {}});
    g->first = std::min(g->first, r.start);
    g->last = std::max(g->last, r.end);
    const std::string a = activity(r);
    auto b = std::find_if(g->by.begin(), g->by.end(), [&](const auto& x) { return x.first == a; });
    if (b == g->by.end()) b = g->by.insert(g->by.end(), {a, 0.0});
    b->second += r.end - r.start;
  }
  std::ostringstream os;
  for (std::size_t i = 0; i < groups.size() && i < lines; ++i) {
    Group& g = groups[i];
    std::stable_sort(g.by.begin(), g.by.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    const double span = g.last - g.first;
    os << launch_names_[g.launch] << " CTA " << g.cta << (g.group ? " group " + std::to_string(g.group) : "")
       << ": " << io::TablePrinter::group_thousands(static_cast<std::uint64_t>(span + 0.5)) << " cycles";
    for (const auto& [name, cycles] : g.by)
      if (span > 0 && cycles / span >= 0.0005) os << ", " << name << " " << fixed(100.0 * cycles / span, 1) << " %";
    os << "\n";
  }
  if (groups.size() > lines) os << "(" << groups.size() - lines << " more CTA groups in the file)\n";
  return os.str();
}

void write_trace(const std::string& path, const TraceCollector& trace, const core::DeviceSpec& device) {
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  const std::string text = json ? trace.chrome_json(device.clock_ghz, device.name) : trace.tsv(device.clock_ghz);
  io::write_output(path, text.data(), text.size());
}

}  // namespace attnsim::app
