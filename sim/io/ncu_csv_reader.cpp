#include "sim/io/ncu_csv_reader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>

#include "sim/core/errors.h"

namespace attnsim::io {

namespace {

// Metric names of the contract (docs/metrics.md): a text cell in one of these is an error.
constexpr std::array<std::string_view, 17> kKnownMetrics = {
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_bytes.sum",
    "lts__t_sector_hit_rate.pct",
    "gpu__time_duration.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__waves_per_multiprocessor",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
};

constexpr std::size_t kMaxProblems = 20;

bool is_known_metric(std::string_view name) {
  return std::find(kKnownMetrics.begin(), kKnownMetrics.end(), name) != kKnownMetrics.end();
}

// Nsight Compute metric names are "<unit>__<counter>": that double underscore marks a metric.
bool is_metric_column(std::string_view name) { return name.find("__") != std::string_view::npos; }

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool is_absent(const std::string& cell) {
  return cell.empty() || cell == "n/a" || cell == "N/A" || cell == "-";
}

struct Record {
  int line = 0;
  std::vector<std::string> cells;
};

struct Problems {
  std::string file;
  std::vector<core::ConfigProblem> list;
  void add(int line, std::string column, std::string message) {
    if (list.size() < kMaxProblems) list.push_back({file, line, std::move(column), std::move(message)});
  }
  void throw_if_any() const {
    if (!list.empty()) throw core::ConfigError(list);
  }
};

// RFC 4180 records: quoted cells may hold commas, doubled quotes and newlines. Lines that
// Nsight Compute writes before the table ("==PROF== ...") are skipped.
std::vector<Record> split_records(const std::string& text, Problems& problems) {
  std::vector<Record> records;
  std::size_t i = 0;
  int line = 1;
  const std::size_t n = text.size();
  while (i < n) {
    if (text.compare(i, 2, "==") == 0) {
      while (i < n && text[i] != '\n') ++i;
      ++i;
      ++line;
      continue;
    }
    Record rec;
    rec.line = line;
    std::string cell;
    bool in_quotes = false;
    bool done = false;
    while (i < n && !done) {
      const char c = text[i];
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < n && text[i + 1] == '"') {
            cell += '"';
            ++i;
          } else {
            in_quotes = false;
          }
        } else {
          if (c == '\n') ++line;
          cell += c;
        }
      } else if (c == '"') {
        in_quotes = true;
      } else if (c == ',') {
        rec.cells.push_back(trim(cell));
        cell.clear();
      } else if (c == '\n') {
        done = true;
        ++line;
      } else if (c != '\r') {
        cell += c;
      }
      ++i;
    }
    if (in_quotes) problems.add(rec.line, "", "unterminated quoted cell");
    rec.cells.push_back(trim(cell));
    const bool blank = std::all_of(rec.cells.begin(), rec.cells.end(),
                                   [](const std::string& s) { return s.empty(); });
    if (!blank) records.push_back(std::move(rec));
  }
  return records;
}

struct Columns {
  std::map<std::string, std::size_t> index;  // header name -> position (first occurrence)
  std::optional<std::size_t> find(std::string_view name) const {
    auto it = index.find(std::string(name));
    if (it == index.end()) return std::nullopt;
    return it->second;
  }
};

class RowParser {
 public:
  RowParser(const Columns& cols, Problems& problems) : cols_(cols), problems_(problems) {}

  std::string text(const Record& r, std::string_view column) const {
    auto pos = cols_.find(column);
    if (!pos) return {};
    const std::string& cell = r.cells[*pos];
    return is_absent(cell) ? std::string() : cell;
  }

  std::optional<std::uint64_t> count(const Record& r, std::string_view column) const {
    const std::string cell = text(r, column);
    if (cell.empty()) return std::nullopt;
    auto v = NcuCsvReader::parse_number(cell);
    // Range first: casting a double at or beyond 2^64 to uint64_t is undefined behaviour.
    if (!v || !(*v >= 0 && *v < 18446744073709551616.0) ||
        *v != static_cast<double>(static_cast<std::uint64_t>(*v))) {
      problems_.add(r.line, std::string(column),
                    "cannot parse '" + cell + "' as a non-negative integer");
      return std::nullopt;
    }
    return static_cast<std::uint64_t>(*v);
  }

  std::optional<bool> flag(const Record& r, std::string_view column) const {
    const std::string cell = text(r, column);
    if (cell.empty()) return std::nullopt;
    if (cell == "1" || cell == "true" || cell == "True") return true;
    if (cell == "0" || cell == "false" || cell == "False") return false;
    problems_.add(r.line, std::string(column), "cannot parse '" + cell + "' as 0/1/true/false");
    return std::nullopt;
  }

 private:
  const Columns& cols_;
  Problems& problems_;
};

std::string workload_key(const MeasuredWorkload& w) {
  std::ostringstream k;
  auto num = [&](const std::optional<std::uint64_t>& v) { k << (v ? std::to_string(*v) : "-") << '|'; };
  k << w.label << '|' << w.variant << '|' << w.kernel << '|' << w.pass << '|';
  num(w.batch);
  num(w.heads);
  num(w.kv_heads);
  num(w.seq_q);
  num(w.seq_kv);
  num(w.head_dim);
  k << (w.causal ? (*w.causal ? "1" : "0") : "-") << '|';
  num(w.block_m);
  num(w.block_n);
  num(w.warps);
  num(w.stages);
  k << w.cta_order;
  return k.str();
}

}  // namespace

std::optional<double> NcuCsvReader::parse_number(const std::string& raw) {
  const std::string cell = trim(raw);
  if (cell.empty()) return std::nullopt;
  std::size_t i = 0;
  if (cell[i] == '+' || cell[i] == '-') ++i;
  // Integer part, with thousands separators grouping exactly three digits when present.
  const std::size_t int_begin = i;
  while (i < cell.size() && (std::isdigit(static_cast<unsigned char>(cell[i])) || cell[i] == ',')) ++i;
  const std::string_view int_part(cell.data() + int_begin, i - int_begin);
  if (int_part.find(',') != std::string_view::npos) {
    std::size_t group_begin = 0;
    bool first_group = true;
    while (true) {
      const std::size_t comma = int_part.find(',', group_begin);
      const std::size_t len = (comma == std::string_view::npos ? int_part.size() : comma) - group_begin;
      if (first_group ? (len < 1 || len > 3) : len != 3) return std::nullopt;
      if (comma == std::string_view::npos) break;
      group_begin = comma + 1;
      first_group = false;
    }
  }
  std::string plain;
  plain.reserve(cell.size());
  for (char c : cell) {
    if (c != ',') plain += c;
  }
  if (!plain.empty() && plain.front() == '+') plain.erase(0, 1);
  double value = 0;
  const char* begin = plain.data();
  const char* end = plain.data() + plain.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

MeasuredTable NcuCsvReader::read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::ConfigError(core::ConfigProblem{path, 0, "", "cannot open file"});
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse(buf.str(), path);
}

MeasuredTable NcuCsvReader::parse(const std::string& text, const std::string& file_name) {
  Problems problems{file_name, {}};
  if (text.find('\0') != std::string::npos) {
    problems.add(0, "", "not a CSV file (binary content); expected an Nsight Compute export "
                        "(ncu --csv --page raw --print-units base)");
    problems.throw_if_any();
  }
  std::vector<Record> records = split_records(text, problems);
  problems.throw_if_any();
  if (records.empty()) {
    problems.add(0, "", "empty file; expected an Nsight Compute CSV export");
    problems.throw_if_any();
  }
  const Record& head = records.front();
  if (head.cells.size() < 2) {
    problems.add(head.line, "", "not a CSV file (the first row has no comma-separated columns)");
    problems.throw_if_any();
  }

  MeasuredTable table;
  table.file = file_name;
  Columns cols;
  for (std::size_t c = 0; c < head.cells.size(); ++c) cols.index.emplace(head.cells[c], c);
  std::vector<std::size_t> metric_cols;
  bool any_known = false;
  for (std::size_t c = 0; c < head.cells.size(); ++c) {
    if (is_metric_column(head.cells[c])) {
      metric_cols.push_back(c);
      table.metric_names.push_back(head.cells[c]);
      any_known = any_known || is_known_metric(head.cells[c]);
    }
  }
  if (!any_known) {
    problems.add(head.line, "",
                 "not an Nsight Compute export: no known metric column (such as "
                 "dram__bytes_read.sum or gpu__time_duration.sum); export with "
                 "ncu --csv --page raw --print-units base");
    problems.throw_if_any();
  }

  std::string name_col;
  std::string index_col;
  if (cols.find("kernel_name")) {
    table.layout = CsvLayout::kReference;
    name_col = "kernel_name";
    index_col = "kernel_index";
    std::vector<std::string> required = {"batch", "heads", "seq_q", "seq_kv", "head_dim",
                                         "kernel_index", "kernel_name"};
    if (!cols.find("variant") && !cols.find("kernel")) required.insert(required.begin(), "variant");
    for (const auto& r : required) {
      if (!cols.find(r)) problems.add(head.line, r, "missing required column");
    }
  } else if (cols.find("Kernel Name") || cols.find("Function Name")) {
    table.layout = CsvLayout::kNcuRaw;
    name_col = cols.find("Kernel Name") ? "Kernel Name" : "Function Name";
    index_col = cols.find("kernel_index") ? "kernel_index" : "";
    if (!cols.find("ID")) problems.add(head.line, "ID", "missing required column");
  } else {
    problems.add(head.line, "kernel_name",
                 "missing required column (an ncu export names it 'Kernel Name')");
  }
  problems.throw_if_any();

  RowParser parse_row(cols, problems);
  std::map<std::string, std::uint64_t> launches_seen;  // workload key -> kernels so far
  for (std::size_t r = 1; r < records.size(); ++r) {
    const Record& rec = records[r];
    if (rec.cells.size() != head.cells.size()) {
      problems.add(rec.line, "", "ragged row: " + std::to_string(rec.cells.size()) +
                                     " cells, the header has " +
                                     std::to_string(head.cells.size()));
      continue;
    }
    if (table.layout == CsvLayout::kNcuRaw && r == 1) {
      // The units row (--print-units base): no ID and no number in any metric column.
      const bool units = parse_row.text(rec, "ID").empty() &&
                         std::none_of(metric_cols.begin(), metric_cols.end(), [&](std::size_t c) {
                           return parse_number(rec.cells[c]).has_value();
                         });
      if (units) continue;
    }
    MeasuredKernel k;
    k.line = rec.line;
    MeasuredWorkload& w = k.workload;
    w.label = parse_row.text(rec, "label");
    w.variant = parse_row.text(rec, "variant");
    w.kernel = parse_row.text(rec, "kernel");
    w.pass = parse_row.text(rec, "pass_");
    if (w.pass.empty()) w.pass = parse_row.text(rec, "pass");
    w.batch = parse_row.count(rec, "batch");
    w.heads = parse_row.count(rec, "heads");
    w.kv_heads = parse_row.count(rec, "kv_heads");
    w.seq_q = parse_row.count(rec, "seq_q");
    w.seq_kv = parse_row.count(rec, "seq_kv");
    w.head_dim = parse_row.count(rec, "head_dim");
    w.causal = parse_row.flag(rec, "causal");
    w.block_m = parse_row.count(rec, "block_m");
    w.block_n = parse_row.count(rec, "block_n");
    w.warps = parse_row.count(rec, "warps");
    w.stages = parse_row.count(rec, "stages");
    w.cta_order = parse_row.text(rec, "cta_order");
    k.kernel_name = parse_row.text(rec, name_col);
    if (table.layout == CsvLayout::kReference) {
      for (std::string_view col : {"batch", "heads", "seq_q", "seq_kv", "head_dim"}) {
        if (parse_row.text(rec, col).empty()) problems.add(rec.line, std::string(col), "empty cell");
      }
      if (w.variant.empty() && w.kernel.empty()) problems.add(rec.line, "variant", "empty cell");
    }
    const std::string key = workload_key(w);
    const std::uint64_t order = launches_seen[key]++;
    if (!index_col.empty()) {
      auto idx = parse_row.count(rec, index_col);
      if (!idx && parse_row.text(rec, index_col).empty()) problems.add(rec.line, index_col, "empty cell");
      k.kernel_index = idx.value_or(0);
    } else {
      k.kernel_index = order;
    }
    for (std::size_t c : metric_cols) {
      const std::string& cell = rec.cells[c];
      if (is_absent(cell)) continue;
      if (auto v = parse_number(cell)) {
        k.metrics[head.cells[c]] = *v;
        continue;
      }
      const unsigned char first = static_cast<unsigned char>(cell.front());
      const bool looks_numeric = std::isdigit(first) || first == '-' || first == '+' || first == '.';
      if (looks_numeric || is_known_metric(head.cells[c])) {
        problems.add(rec.line, head.cells[c], "cannot parse '" + cell + "' as a number");
      }
      // Otherwise a text-valued metric (e.g. launch__func_cache_config): not comparable, skipped.
    }
    table.kernels.push_back(std::move(k));
  }
  problems.throw_if_any();
  return table;
}

}  // namespace attnsim::io
