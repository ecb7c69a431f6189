// Measured kernels from CSV: Nsight Compute raw exports (`ncu --csv --page raw --print-units base`:
// metric header row, units row, quoted cells, thousands separators, "n/a") and the one-header-row
// layout of tests/data/reference/kernels.csv. Text-valued metrics are skipped; no ncu report files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnsim::io {

// The workload a measured kernel belongs to, as far as the CSV says (absent cells stay empty).
struct MeasuredWorkload {
  std::string label;     // e.g. "B1H32N1024d128/std"
  std::string variant;   // e.g. "std", "sdpa_flash"
  std::string kernel;    // attnsim kernel name when the CSV has a `kernel` column
  std::string pass;      // "fwd", "fwdbwd"
  std::optional<std::uint64_t> batch, heads, kv_heads, seq_q, seq_kv, head_dim;
  std::optional<bool> causal;
  std::optional<std::uint64_t> block_m, block_n, warps, stages;
  std::string cta_order;
  bool has_shape() const { return batch && heads && seq_q && seq_kv && head_dim; }
};

struct MeasuredKernel {
  int line = 0;                    // 1-based line of the row in the file
  MeasuredWorkload workload;
  std::uint64_t kernel_index = 0;  // launch order within its workload
  std::string kernel_name;
  std::map<std::string, double> metrics;  // metric name -> value in ncu base units
};

enum class CsvLayout : std::uint8_t { kNcuRaw, kReference };

struct MeasuredTable {
  std::string file;
  CsvLayout layout = CsvLayout::kReference;
  std::vector<std::string> metric_names;  // metric columns, in file order
  std::vector<MeasuredKernel> kernels;    // in file order
};

class NcuCsvReader {
 public:
  // Throws core::ConfigError ("file:line: column: what is wrong") when the file cannot be read,
  // is not a CSV, has no known metric column, lacks a required column, has a ragged row or a
  // cell that should be a number and is not.
  static MeasuredTable read_file(const std::string& path);
  // `file_name` only labels error messages.
  static MeasuredTable parse(const std::string& text, const std::string& file_name);

  // Parses "1,234,567.5", "-3", "1e9" exactly as a whole cell; nullopt when it is not a number
  // (thousands separators must group three digits).
  static std::optional<double> parse_number(const std::string& cell);
};

}  // namespace attnsim::io
