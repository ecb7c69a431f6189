// `attnsim formulas`: the lesson's closed-form byte counts (score matrix, one tile, blocks per
// row) and, with --head-dim, the closed-form HBM traffic per tensor of standard, FlashAttention-1
// and FlashAttention-2 attention (core::closed_form_traffic: every global access reaches HBM).
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/attention_numerics.h"
#include "kernels/block_sizes.h"
#include "sim/app/cli_common.h"
#include "sim/app/commands.h"
#include "sim/core/errors.h"
#include "sim/core/io_counts.h"
#include "sim/io/json_writer.h"
#include "sim/io/h5_results_writer.h"
#include "sim/io/provenance.h"
#include "sim/io/results_table.h"
#include "sim/app/output_path.h"
#include "sim/app/command_line.h"
#include "sim/io/table_printer.h"
#include "kernels/registry.h"

namespace attnsim::app {

namespace {

constexpr core::Bytes kDefaultSramBytes = 192 * 1024;  // FlashAttention §2.1: 192 KB SRAM per A100 SM

const char* const kUsage =
    "attnsim formulas --seq N --tile T [--bytes-per-value B | --dtype DT] [--head-dim D [--heads H]\n"
    "       [--batch B] [--kv-heads G] [--block-m BM] [--block-n BN] [--sram-bytes M] [--causal]\n"
    "       [--pass fwd|fwdbwd]] [--json]\n\n"
    "Prints the score-matrix bytes per head (seq_q x seq_kv x bytes per value), one T x T tile's\n"
    "bytes and the key/value blocks per query row, ceil(seq_kv / T) (the last block may be ragged).\n"
    "With --head-dim it adds the closed-form HBM traffic per tensor with every global access\n"
    "reaching HBM (L2 off) of:\n"
    "  standard  three kernels S = QK^T, P = softmax(S), O = PV; GEMM tiles T x T, k-tile T;\n"
    "  flash1    FlashAttention-1 loop order (outer loop over key/value blocks of B_c rows,\n"
    "            inner over query blocks of B_r rows; O, m, l re-read and re-written);\n"
    "  flash2    FlashAttention-2 loop order (one CTA per query block of B_r rows).\n"
    "Block sizes, unless --block-m (B_r) / --block-n (B_c) are given, are those `attnsim run` uses:\n"
    "flash1 follows FlashAttention Algorithm 1 with M = --sram-bytes / bytes per value ELEMENTS\n"
    "(default --sram-bytes 196608 = 192 KiB): B_c = ceil(M / 4d), B_r = min(ceil(M / 4d), d); e.g.\n"
    "d = 64, fp16 -> B_c = 384, B_r = 64. flash2 uses FlashAttention-2's kernel defaults, B_r = 128,\n"
    "B_c = 128 (d <= 64) or 64 (d > 64); M does not enter.";

struct Options {
  std::int64_t seq = 0, seq_q = 0, seq_kv = 0, tile = 0, bytes_per_value = 2;
  std::int64_t head_dim = 0, heads = 1, batch = 1, kv_heads = 0, block_m = 0, block_n = 0;
  std::int64_t sram_bytes = static_cast<std::int64_t>(kDefaultSramBytes);
  std::string dtype, pass = "fwd";
  bool causal = false, json = false;
  std::string out;
};

// What the command computes.
struct KernelTraffic {
  std::string kernel;
  core::Workload workload;
  std::vector<core::LaunchTraffic> launches;
  core::TensorTraffic total;
};

struct Report {
  std::uint64_t seq_q = 0, seq_kv = 0, tile = 0;
  core::Bytes bytes_per_value = 0;
  core::Bytes score_bytes = 0, tile_bytes = 0;
  std::uint64_t num_blocks = 0, last_block_rows = 0;
  std::optional<kernels::Flash1Blocks> algorithm1;  // when block sizes came from Algorithm 1
  std::vector<KernelTraffic> kernels;               // empty without --head-dim
};

// "32 MiB", "1.5 KiB", "33.2 GiB": binary prefixes, up to 3 significant decimals.
std::string human_bytes(core::Bytes b) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  std::ostringstream s;
  s << std::setprecision(v >= 100 ? 4 : 3) << v << ' ' << kUnits[u];
  return s.str();
}

std::string bytes_with_units(core::Bytes b) {
  return io::TablePrinter::group_thousands(b) + " B (" + human_bytes(b) + ")";
}

std::optional<core::DType> dtype_for_bytes(std::int64_t bpv) {
  if (bpv == 4) return core::DType::kFp32;
  if (bpv == 2) return core::DType::kFp16;
  if (bpv == 1) return core::DType::kFp8;
  return std::nullopt;
}

Report compute(const Options& o, const po::variables_map& vm) {
  std::vector<core::ConfigProblem> problems;
  const auto need_positive = [&problems](std::int64_t v, const char* flag) {
    if (v < 1) problems.push_back({"", 0, flag, "must be >= 1, got " + std::to_string(v)});
  };
  std::int64_t seq_q = vm.count("seq-q") ? o.seq_q : o.seq;
  std::int64_t seq_kv = vm.count("seq-kv") ? o.seq_kv : o.seq;
  if (!vm.count("seq") && (!vm.count("seq-q") || !vm.count("seq-kv"))) {
    problems.push_back({"", 0, "--seq", "required (or both --seq-q and --seq-kv)"});
  } else {
    need_positive(seq_q, vm.count("seq-q") ? "--seq-q" : "--seq");
    need_positive(seq_kv, vm.count("seq-kv") ? "--seq-kv" : "--seq");
  }
  need_positive(o.tile, "--tile");
  std::optional<core::DType> dtype;
  std::int64_t bpv = o.bytes_per_value;
  if (vm.count("dtype")) {
    dtype = core::parse_dtype(o.dtype);
    if (!dtype) {
      problems.push_back({"", 0, "--dtype", "unknown dtype '" + o.dtype + "' (fp32, fp16, bf16, fp8)"});
    } else if (!vm["bytes-per-value"].defaulted() &&
               static_cast<core::Bytes>(bpv) != core::bytes_per_value(*dtype)) {
      problems.push_back({"", 0, "--bytes-per-value", std::to_string(bpv) + " contradicts --dtype " + o.dtype});
    } else {
      bpv = static_cast<std::int64_t>(core::bytes_per_value(*dtype));
    }
  } else {
    need_positive(bpv, "--bytes-per-value");
    dtype = dtype_for_bytes(bpv);
  }
  const bool traffic = vm.count("head-dim") > 0;
  if (traffic) {
    need_positive(o.head_dim, "--head-dim");
    need_positive(o.heads, "--heads");
    need_positive(o.batch, "--batch");
    need_positive(o.sram_bytes, "--sram-bytes");
    if (vm.count("kv-heads")) need_positive(o.kv_heads, "--kv-heads");
    if (vm.count("block-m")) need_positive(o.block_m, "--block-m");
    if (vm.count("block-n")) need_positive(o.block_n, "--block-n");
    if (o.heads >= 1 && o.kv_heads >= 1 && o.heads % o.kv_heads != 0) {
      problems.push_back({"", 0, "--kv-heads", "--heads (" + std::to_string(o.heads) +
                                                   ") must be a multiple of --kv-heads (" +
                                                   std::to_string(o.kv_heads) + ")"});
    }
    if (o.causal && seq_q > seq_kv) {
      problems.push_back({"", 0, "--causal", "causal attention needs seq_q <= seq_kv"});
    }
    if (o.pass != "fwd" && o.pass != "fwdbwd") {
      problems.push_back({"", 0, "--pass", "'" + o.pass + "' is not fwd or fwdbwd"});
    }
    if (bpv >= 1 && !dtype) {
      problems.push_back({"", 0, "--bytes-per-value", "traffic needs 1, 2 or 4 bytes per value (or --dtype), got " +
                                                          std::to_string(bpv)});
    }
  } else {
    for (const char* flag : {"heads", "batch", "kv-heads", "block-m", "block-n", "sram-bytes", "causal", "pass"}) {
      if (vm.count(flag) && !vm[flag].defaulted()) {
        problems.push_back({"", 0, std::string("--") + flag, "only meaningful with --head-dim"});
      }
    }
  }
  if (!problems.empty()) throw core::ConfigError(problems);

  Report r;
  r.seq_q = static_cast<std::uint64_t>(seq_q);
  r.seq_kv = static_cast<std::uint64_t>(seq_kv);
  r.tile = static_cast<std::uint64_t>(o.tile);
  r.bytes_per_value = static_cast<core::Bytes>(bpv);
  r.score_bytes = r.seq_q * r.seq_kv * r.bytes_per_value;  // kernels::score_bytes for seq_q = seq_kv
  r.tile_bytes = kernels::tile_bytes(r.tile, r.bytes_per_value);
  r.num_blocks = kernels::num_blocks(r.seq_kv, r.tile);
  r.last_block_rows = r.seq_kv - (r.num_blocks - 1) * r.tile;
  if (!traffic) return r;

  core::Workload base;
  base.batch = static_cast<std::uint64_t>(o.batch);
  base.heads = static_cast<std::uint64_t>(o.heads);
  base.kv_heads = o.kv_heads ? static_cast<std::uint64_t>(o.kv_heads) : base.heads;
  base.seq_q = r.seq_q;
  base.seq_kv = r.seq_kv;
  base.head_dim = static_cast<std::uint64_t>(o.head_dim);
  base.dtype = *dtype;
  base.causal = o.causal;
  base.pass = o.pass == "fwd" ? core::Pass::kFwd : core::Pass::kFwdBwd;
  base.sram_bytes = static_cast<core::Bytes>(o.sram_bytes);

  // Block sizes as `attnsim run` sets them (kernels/block_sizes.h): flash1 from Algorithm 1 and
  // M, flash2 from FlashAttention-2's defaults; --block-m / --block-n override both.
  const kernels::Flash1Blocks alg1 =
      kernels::flash1_block_sizes(base.sram_bytes, base.head_dim, base.value_bytes());
  if (!vm.count("block-m") || !vm.count("block-n")) r.algorithm1 = alg1;
  auto given = [&](const char* flag, std::int64_t v, std::uint64_t fallback) {
    return vm.count(flag) ? static_cast<std::uint64_t>(v) : fallback;
  };

  for (const char* name : {"standard", "flash1", "flash2"}) {
    KernelTraffic k;
    k.kernel = name;
    k.workload = base;
    k.workload.kernel = name;
    if (kernels::find_kernel(k.kernel)->gemm_tiles) {
      k.workload.block_m = k.workload.block_n = k.workload.block_k = r.tile;
    } else {
      const kernels::AttentionBlocks b =
          kernels::default_attention_blocks(k.kernel, base.sram_bytes, base.head_dim, base.value_bytes());
      k.workload.block_m = given("block-m", o.block_m, b.b_r);
      k.workload.block_n = given("block-n", o.block_n, b.b_c);
    }
    k.launches = kernels::closed_form_traffic(k.workload);
    if (k.launches.empty()) throw core::SimError("no closed form for kernel '" + k.kernel + "'");
    for (const auto& l : k.launches) k.total += l.traffic;
    r.kernels.push_back(std::move(k));
  }
  return r;
}

void write_tensor_bytes(io::JsonWriter& j, const core::TensorBytes& b) {
  j.begin_object();
  j.key("read");
  j.value(static_cast<std::uint64_t>(b.read));
  j.key("write");
  j.value(static_cast<std::uint64_t>(b.write));
  j.end_object();
}

void write_json(const Report& r, std::ostream& out) {
  io::JsonWriter j(out);
  j.begin_object();
  const auto num = [&j](const char* key, std::uint64_t v) {
    j.key(key);
    j.value(v);
  };
  num("seq_q", r.seq_q);
  num("seq_kv", r.seq_kv);
  num("tile", r.tile);
  num("bytes_per_value", r.bytes_per_value);
  num("score_bytes", r.score_bytes);
  num("tile_bytes", r.tile_bytes);
  num("num_blocks", r.num_blocks);
  num("last_block_rows", r.last_block_rows);
  if (!r.kernels.empty()) {
    const core::Workload& w = r.kernels.front().workload;
    j.key("workload");
    j.begin_object();
    num("batch", w.batch);
    num("heads", w.heads);
    num("kv_heads", w.kv_heads);
    num("head_dim", w.head_dim);
    j.key("dtype");
    j.value(core::to_string(w.dtype));
    j.key("causal");
    j.value(w.causal);
    j.key("pass");
    j.value(core::to_string(w.pass));
    num("sram_bytes", w.sram_bytes);
    j.end_object();
  }
  for (const auto& k : r.kernels) {
    j.key(k.kernel);
    j.begin_object();
    num("block_m", k.workload.block_m);
    num("block_n", k.workload.block_n);
    if (kernels::find_kernel(k.kernel)->gemm_tiles) num("block_k", k.workload.block_k);
    j.key("tensors");
    j.begin_object();
    for (std::size_t t = 0; t < core::kNumTensors; ++t) {
      const core::TensorBytes& b = k.total.by_tensor[t];
      if (b.read == 0 && b.write == 0) continue;
      j.key(core::to_string(static_cast<core::Tensor>(t)));
      write_tensor_bytes(j, b);
    }
    j.end_object();
    j.key("launches");
    j.begin_array();
    for (const auto& l : k.launches) {
      j.begin_object();
      j.key("name");
      j.value(l.kernel_name);
      num("read", l.traffic.total_read());
      num("write", l.traffic.total_write());
      j.end_object();
    }
    j.end_array();
    num("read", k.total.total_read());
    num("write", k.total.total_write());
    num("total", k.total.total_read() + k.total.total_write());
    j.end_object();
  }
  j.end_object();
  j.finish();
}

void write_traffic_text(const Report& r, std::ostream& out) {
  const core::Workload& w = r.kernels.front().workload;
  out << "\nclosed-form HBM traffic (every global access reaches HBM): batch " << w.batch << ", heads "
      << w.heads << ", kv_heads " << w.kv_heads << ", head_dim " << w.head_dim << ", "
      << core::to_string(w.dtype) << (w.causal ? ", causal" : "") << ", pass " << core::to_string(w.pass)
      << "\n";
  for (const auto& k : r.kernels) {
    out << "  " << k.kernel << ": ";
    if (kernels::find_kernel(k.kernel)->gemm_tiles) {
      out << "GEMM tiles " << k.workload.block_m << " x " << k.workload.block_n << ", k-tile "
          << k.workload.block_k << "\n";
    } else {
      out << "B_r = " << k.workload.block_m << ", B_c = " << k.workload.block_n;
      const bool from_sram = kernels::default_attention_blocks(k.kernel, w.sram_bytes, w.head_dim, w.value_bytes()).from_sram;
      if (r.algorithm1 && from_sram) {
        out << " (Algorithm 1, M = " << io::TablePrinter::group_thousands(w.sram_bytes) << " B = "
            << io::TablePrinter::group_thousands(w.sram_bytes / w.value_bytes()) << " elements)";
      } else if (r.algorithm1) {
        out << " (FlashAttention-2 defaults; M does not enter)";
      }
      out << "\n";
    }
  }
  for (const char* name : {"flash1", "flash2"}) out << "  " << kernels::block_size_rule(name) << "\n";
  out << "\n";
  std::vector<std::string> header{"tensor"};
  for (const auto& k : r.kernels) {
    header.push_back(k.kernel + " read");
    header.push_back(k.kernel + " write");
  }
  io::TablePrinter table(header);
  for (std::size_t t = 0; t < core::kNumTensors; ++t) {
    bool any = false;
    for (const auto& k : r.kernels) any = any || k.total.by_tensor[t].read || k.total.by_tensor[t].write;
    if (!any) continue;
    std::vector<std::string> row{std::string(core::to_string(static_cast<core::Tensor>(t)))};
    for (const auto& k : r.kernels) {
      row.push_back(io::TablePrinter::group_thousands(k.total.by_tensor[t].read));
      row.push_back(io::TablePrinter::group_thousands(k.total.by_tensor[t].write));
    }
    table.add_row(row);
  }
  std::vector<std::string> totals{"total"};
  for (const auto& k : r.kernels) {
    totals.push_back(io::TablePrinter::group_thousands(k.total.total_read()));
    totals.push_back(io::TablePrinter::group_thousands(k.total.total_write()));
  }
  table.add_row(totals);
  table.print(out);
  out << "\n";
  const core::Bytes standard_total = r.kernels.front().total.total_read() + r.kernels.front().total.total_write();
  for (const auto& k : r.kernels) {
    const core::Bytes total = k.total.total_read() + k.total.total_write();
    std::string name = k.kernel + " read + write";
    name.resize(24, ' ');
    out << name << bytes_with_units(total);
    if (!kernels::find_kernel(k.kernel)->gemm_tiles && total > 0) {
      std::ostringstream ratio;
      ratio << std::setprecision(3) << static_cast<double>(standard_total) / static_cast<double>(total);
      out << ", standard / " << k.kernel << " = " << ratio.str();
    }
    out << "\n";
  }
}

void write_text(const Report& r, std::ostream& out) {
  const std::string b = std::to_string(r.bytes_per_value);
  out << "score matrix per head   " << r.seq_q << " x " << r.seq_kv << " x " << b
      << " B = " << bytes_with_units(r.score_bytes) << "\n";
  out << "one tile                " << r.tile << " x " << r.tile << " x " << b
      << " B = " << bytes_with_units(r.tile_bytes) << "\n";
  out << "key/value blocks per query row   ceil(" << r.seq_kv << " / " << r.tile << ") = " << r.num_blocks;
  if (r.last_block_rows != r.tile) {
    out << " (last block ragged: " << r.last_block_rows << " of " << r.tile << " rows)";
  }
  out << "\n";
  if (!r.kernels.empty()) write_traffic_text(r, out);
}

// `--out`: the report as an HDF5 table (docs/hdf5-schema.md), one row per (kernel, launch,
// tensor) with traffic, the sizes repeated on every row; a single row without --head-dim.
void write_h5(const Report& r, const std::string& path, const Args& args) {
  std::vector<io::Column> cols = {{"kernel", {}}, {"launch", {}}, {"tensor", {}},
                                  {"read_bytes", {}}, {"write_bytes", {}}, {"seq_q", {}},
                                  {"seq_kv", {}}, {"tile", {}}, {"bytes_per_value", {}},
                                  {"score_bytes", {}}, {"tile_bytes", {}}, {"num_blocks", {}}};
  auto add_row = [&](const std::string& kernel, const std::string& launch, const std::string& tensor,
                     core::Bytes read, core::Bytes write) {
    const std::vector<io::Cell> row = {kernel, launch, tensor,
                                       static_cast<std::int64_t>(read), static_cast<std::int64_t>(write),
                                       static_cast<std::int64_t>(r.seq_q), static_cast<std::int64_t>(r.seq_kv),
                                       static_cast<std::int64_t>(r.tile), static_cast<std::int64_t>(r.bytes_per_value),
                                       static_cast<std::int64_t>(r.score_bytes), static_cast<std::int64_t>(r.tile_bytes),
                                       static_cast<std::int64_t>(r.num_blocks)};
    for (std::size_t i = 0; i < cols.size(); ++i) cols[i].cells.push_back(row[i]);
  };
  for (const auto& k : r.kernels)
    for (const auto& l : k.launches)
      for (std::size_t t = 0; t < core::kNumTensors; ++t) {
        const auto& b = l.traffic.by_tensor[t];
        if (b.read == 0 && b.write == 0) continue;
        add_row(k.kernel, l.kernel_name, std::string(core::to_string(static_cast<core::Tensor>(t))), b.read, b.write);
      }
  if (cols[0].cells.empty()) add_row("", "", "", 0, 0);
  io::write_table_h5(path, cols, io::Provenance::current(command_line("formulas", args)));
}

}  // namespace

int cmd_formulas(const Args& args, std::ostream& out) {
  Options o;
  po::options_description desc("formulas options");
  desc.add_options()
      ("seq", po::value<std::int64_t>(&o.seq), "sequence length N (sets seq_q and seq_kv)")
      ("seq-q", po::value<std::int64_t>(&o.seq_q), "query sequence length (overrides --seq)")
      ("seq-kv", po::value<std::int64_t>(&o.seq_kv), "key/value sequence length (overrides --seq)")
      ("tile", po::value<std::int64_t>(&o.tile)->required(), "tile edge T (rows = columns)")
      ("bytes-per-value", po::value<std::int64_t>(&o.bytes_per_value)->default_value(2), "bytes per stored value")
      ("dtype", po::value<std::string>(&o.dtype), "fp32, fp16, bf16 or fp8 (sets the bytes per value)")
      ("head-dim", po::value<std::int64_t>(&o.head_dim), "head dimension d: adds the closed-form traffic")
      ("heads", po::value<std::int64_t>(&o.heads)->default_value(1), "query heads")
      ("batch", po::value<std::int64_t>(&o.batch)->default_value(1), "batch size")
      ("kv-heads", po::value<std::int64_t>(&o.kv_heads), "key/value heads (default: --heads)")
      ("block-m", po::value<std::int64_t>(&o.block_m), "B_r, query rows per block (default: Algorithm 1)")
      ("block-n", po::value<std::int64_t>(&o.block_n), "B_c, key/value rows per block (default: Algorithm 1)")
      ("sram-bytes", po::value<std::int64_t>(&o.sram_bytes)->default_value(o.sram_bytes),
       "on-chip SRAM M in bytes for Algorithm 1 block sizes")
      ("causal", po::bool_switch(&o.causal), "causal mask (bottom-right aligned)")
      ("pass", po::value<std::string>(&o.pass)->default_value("fwd"), "fwd or fwdbwd")
      ("json", po::bool_switch(&o.json), "print one JSON object instead of text")
      ("out", po::value<std::string>(&o.out), "also write the numbers to this HDF5 file (one row per kernel, launch and tensor)");
  po::variables_map vm;
  if (!parse_options(args, kUsage, desc, vm, out)) return 0;
  if (!o.out.empty()) check_output_path(o.out, "--out");
  const Report r = compute(o, vm);
  if (!o.out.empty()) write_h5(r, o.out, args);
  std::ostream& report = report_stream(o.out, out);
  if (o.json) {
    write_json(r, report);
  } else {
    write_text(r, report);
  }
  return 0;
}

}  // namespace attnsim::app
