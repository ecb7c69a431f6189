// `attnsim run --trace FILE [--trace-ctas LIST]`: the op timeline of chosen CTAs, as a
// tab-separated table (default) or a Chrome trace (FILE ending in .json; ui.perfetto.dev).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/device_spec.h"
#include "sim/core/tile_op.h"
#include "sim/core/tile_program.h"
#include "sim/engine/engine.h"

namespace attnsim::app {

// Parses a CTA list such as "0,5,100-103" (indices in dispatch order) into sorted, distinct
// indices. Throws core::ConfigError at `flag` for a malformed list, a reversed range or more
// than kMaxTracedCtas CTAs.
constexpr std::size_t kMaxTracedCtas = 1024;
std::vector<std::uint64_t> parse_cta_list(const std::string& text, const std::string& flag);

// Throws core::ConfigError at `flag` when a CTA of `ctas` is in no launch of `program`.
void check_traced_ctas(const std::vector<std::uint64_t>& ctas, const core::TileProgram& program,
                       const std::string& flag);

// Collects the records of a run (engine::EngineOptions::trace) and writes them.
class TraceCollector {
 public:
  void add(const engine::TraceRecord& r);
  std::size_t size() const { return rows_.size(); }
  // The table: one row per op, times in cycles from the launch's start and in µs at `clock_ghz`.
  std::string tsv(double clock_ghz) const;
  // The Chrome trace event format: a process per launch, a thread per (CTA, warp group).
  std::string chrome_json(double clock_ghz, const std::string& device) const;
  // Where each traced (launch, CTA, group)'s time went: one line each (at most `lines`, then how
  // many more), its span and the share of each kind of op, largest first. A group's rows follow
  // one another without gaps, so the shares add up to 100 %.
  std::string summary(std::size_t lines) const;

 private:
  struct Row {  // what the callback keeps: the op itself, formatted when written
    std::size_t launch = 0;
    std::uint64_t cta = 0, step = 0;
    std::uint32_t sm = 0, group = 0, op_index = 0;
    core::TileOp op;  // a skipped record's is empty
    engine::TraceRecord::Skipped skipped = engine::TraceRecord::Skipped::kNo;
    double start = 0, end = 0, ready = 0;
  };
  static std::string kind(const Row& r);
  static std::string detail(const Row& r);
  static bool memory(const Row& r);
  std::vector<std::string> launch_names_;  // by launch index
  std::vector<Row> rows_;
};

// Writes the collected timeline to `path` (TSV, or Chrome trace JSON if it ends in ".json") by
// the output-path policy (io::write_output).
void write_trace(const std::string& path, const TraceCollector& trace, const core::DeviceSpec& device);

}  // namespace attnsim::app
