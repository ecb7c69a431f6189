// `attnsim merge --out OUT.h5 SHARD.h5...`: joins the files of one sweep run as shards
// (--shard I/N) into one results file. Refuses files of different sweeps or conflicting points.
#include <map>
#include <string>
#include <vector>

#include "sim/app/cli_common.h"
#include "sim/app/output_path.h"
#include "sim/app/command_line.h"
#include "sim/app/commands.h"
#include "sim/config/sweep_loader.h"
#include "sim/core/errors.h"
#include "sim/io/h5_results_reader.h"
#include "sim/io/h5_results_writer.h"

namespace attnsim::app {

namespace {

const char* const kUsage =
    "attnsim merge --out OUT.h5 IN.h5 [IN.h5...]\n\n"
    "Merges the outputs of one sweep run in shards (attnsim sweep --shard I/N) into one file.\n"
    "All inputs must come from the same sweep file (same sweep_hash), no point may appear in two\n"
    "inputs, and every point of the sweep must be present (--allow-missing: write an incomplete\n"
    "file, attribute complete = 0, instead of refusing).";

core::ConfigError problem(const std::string& file, const std::string& what) {
  return core::ConfigError(core::ConfigProblem{file, 0, "", what});
}

}  // namespace

int cmd_merge(const Args& args, std::ostream& out) {
  std::string out_path;
  std::vector<std::string> inputs;
  bool allow_missing = false;
  po::options_description desc("options");
  desc.add_options()
      ("out", po::value<std::string>(&out_path)->required(), "merged HDF5 file")
      ("inputs", po::value<std::vector<std::string>>(&inputs)->required(), "shard files")
      ("allow-missing", po::bool_switch(&allow_missing), "merge even if some points of the sweep are missing");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  po::variables_map vm;
  if (!parse_options(args, kUsage, desc, vm, out, &pos)) return 0;
  check_output_path(out_path, "--out");

  std::string sweep_text, sweep_hash;
  std::map<std::uint64_t, io::PointRecord> points;
  for (const auto& in : inputs) {
    io::ResultsFile f = io::read_results_h5(in);
    const auto h = f.string_attrs.find("sweep_hash");
    if (h == f.string_attrs.end() || h->second.empty()) throw problem(in, "not a sweep output (no sweep_hash)");
    if (sweep_hash.empty()) {
      sweep_hash = h->second;
      sweep_text = f.string_attrs["sweep_file_text"];
    } else if (h->second != sweep_hash) {
      throw problem(in, "comes from a different sweep file than " + inputs.front());
    }
    for (auto& p : f.points) {
      if (points.count(p.index))
        throw problem(in, "point " + std::to_string(p.index) +
                              " appears more than once (is a shard given twice, or shards of different N?)");
      points[p.index] = std::move(p);
    }
  }
  const config::SweepSpec spec = config::SweepLoader::load_text(sweep_text, inputs.front() + ":sweep_file_text");
  std::vector<io::PointRecord> records;
  for (auto& [i, p] : points) records.push_back(std::move(p));
  const bool complete = records.size() == spec.point_count();
  if (!complete && !allow_missing) {
    std::string missing;
    int listed = 0;
    for (std::uint64_t i = 0; i < spec.point_count() && listed < 10; ++i) {
      if (points.count(i)) continue;
      missing += (listed++ ? ", " : "") + std::to_string(i);
    }
    throw problem(inputs.front(), std::to_string(spec.point_count() - records.size()) + " of " +
                                      std::to_string(spec.point_count()) + " points are missing (first: " + missing +
                                      "); a shard or an interrupted shard's points are absent (--allow-missing merges "
                                      "anyway)");
  }

  io::Provenance prov = io::Provenance::current(command_line("merge", args));
  prov.sweep_text = sweep_text;
  prov.sweep_hash = sweep_hash;
  io::write_results_h5(out_path, records, prov, sweep_text, complete);
  report_stream(out_path, out) << "merged " << inputs.size() << " files: " << records.size() << " of " << spec.point_count() << " points"
      << (complete ? "" : " (incomplete)") << "\nwrote " << out_path << "\n";
  return 0;
}

}  // namespace attnsim::app
