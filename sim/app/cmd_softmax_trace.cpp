// `attnsim softmax-trace`: the online softmax of a list of scores, walked block by block
// (running max m, running sum ℓ, rescale factor), then checked against the direct softmax.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/attention_numerics.h"
#include "sim/app/cli_common.h"
#include "sim/app/commands.h"
#include "sim/core/errors.h"
#include "sim/io/json_writer.h"
#include "sim/io/table_printer.h"

namespace attnsim::app {

namespace {

core::ConfigError flag_error(const std::string& flag, const std::string& message) {
  return core::ConfigError(core::ConfigProblem{"", 0, flag, message});
}

// "1,3,2.5,-4" -> {1, 3, 2.5, -4}; spaces around entries are allowed.
std::vector<double> parse_scores(const std::string& text) {
  std::vector<double> scores;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    item = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    if (item.empty()) {
      throw flag_error("--scores", "empty entry " + std::to_string(scores.size() + 1) + " in '" + text +
                                       "' (expected comma-separated numbers, e.g. 1,3,2,5)");
    }
    double v = 0.0;
    const char* end = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(item.data(), end, v);
    if (ec != std::errc() || ptr != end || !std::isfinite(v)) {
      throw flag_error("--scores", "'" + item + "' is not a finite number (entry " +
                                       std::to_string(scores.size() + 1) + ")");
    }
    scores.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return scores;
}

std::string fixed4(double v) {
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::ostringstream s;
  s << std::fixed << std::setprecision(4) << v;
  return s.str();
}

std::string join_scores(const std::vector<double>& scores) {
  std::string r;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (i) r += ' ';
    r += io::TablePrinter::format_value(scores[i], 6);
  }
  return r;
}

void write_json(const kernels::SoftmaxTrace& t, std::ostream& out) {
  io::JsonWriter j(out);
  j.begin_object();
  j.key("block");
  j.value(static_cast<std::int64_t>(t.block));
  j.key("blocks");
  j.begin_array();
  for (const auto& b : t.blocks) {
    j.begin_object();
    j.key("index");
    j.value(static_cast<std::uint64_t>(b.index));
    j.key("scores");
    j.begin_array();
    for (double s : b.scores) j.value(s);
    j.end_array();
    j.key("m_old");
    j.value(b.m_old);  // -inf (first block) prints as null
    j.key("m");
    j.value(b.m);
    j.key("l");
    j.value(b.l);
    j.key("rescale");
    if (b.index == 1) {
      j.null();  // nothing to rescale yet
    } else {
      j.value(b.rescale);
    }
    j.key("max_grew");
    j.value(b.max_grew);
    j.end_object();
  }
  j.end_array();
  const auto vec = [&j](const char* key, const std::vector<double>& v) {
    j.key(key);
    j.begin_array();
    for (double x : v) j.value(x);
    j.end_array();
  };
  vec("softmax", t.softmax);
  vec("direct_softmax", t.direct_softmax);
  j.key("max_abs_difference");
  j.value(t.max_abs_difference);
  j.end_object();
  j.finish();
}

void write_table(const kernels::SoftmaxTrace& t, std::size_t n, std::ostream& out) {
  out << "online softmax of " << n << " scores in blocks of " << t.block << " (" << t.blocks.size()
      << " blocks)\n"
      << "m = running max, l = sum of exp(score - m) over the scores seen so far,\n"
      << "rescale = exp(m_old - m_new), applied to the old l when the max grows\n\n";
  io::TablePrinter table({"block", "scores", "m_old", "m", "rescale", "l"});
  for (const auto& b : t.blocks) {
    std::string rescale = b.index == 1 ? "-" : fixed4(b.rescale);
    if (b.index > 1 && !b.max_grew) rescale += " (max unchanged)";
    table.add_row({std::to_string(b.index), join_scores(b.scores), fixed4(b.m_old), fixed4(b.m), rescale,
                   fixed4(b.l)});
  }
  table.print(out);
  out << "\nfinal: m = " << fixed4(t.blocks.back().m) << ", l = " << fixed4(t.blocks.back().l) << "\n\n";
  io::TablePrinter probs({"j", "score", "online softmax", "direct softmax"});
  std::size_t j = 0;
  for (const auto& b : t.blocks) {
    for (double s : b.scores) {
      std::ostringstream a, d;
      a << std::setprecision(10) << t.softmax[j];
      d << std::setprecision(10) << t.direct_softmax[j];
      probs.add_row({std::to_string(j + 1), io::TablePrinter::format_value(s, 6), a.str(), d.str()});
      ++j;
    }
  }
  probs.print(out);
  std::ostringstream diff;
  diff << std::setprecision(3) << t.max_abs_difference;
  out << "\nmax |online - direct| = " << diff.str() << "\n";
}

}  // namespace

int cmd_softmax_trace(const Args& args, std::ostream& out) {
  std::string scores_text;
  std::int64_t block = 0;
  po::options_description desc("softmax-trace options");
  desc.add_options()
      ("scores", po::value<std::string>(&scores_text)->required(),
       "comma-separated scores, e.g. 1,3,2,5,4,0,6,2 (negative first entry: --scores=-1,2)")
      ("block", po::value<std::int64_t>(&block)->required(), "scores per block (>= 1)")
      ("json", "print one JSON object instead of tables (full precision)");
  po::variables_map vm;
  if (!parse_options(args, "attnsim softmax-trace --scores LIST --block B [--json]", desc, vm, out)) return 0;
  std::vector<core::ConfigProblem> problems;
  if (block < 1) problems.push_back({"", 0, "--block", "must be >= 1, got " + std::to_string(block)});
  std::vector<double> scores;
  try {
    scores = parse_scores(scores_text);
  } catch (const core::ConfigError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }
  if (!problems.empty()) throw core::ConfigError(problems);
  const kernels::SoftmaxTrace trace = kernels::online_softmax_trace(scores, block);
  if (vm.count("json")) {
    write_json(trace, out);
  } else {
    write_table(trace, scores.size(), out);
  }
  return 0;
}

}  // namespace attnsim::app
