#include "sim/config/workload_loader.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <sstream>

#include "sim/config/input_file.h"
#include "sim/config/map_reader.h"
#include "kernels/registry.h"

namespace attnsim::config {

namespace {

// a*b with overflow detection.
bool mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

template <typename T>
void read_choice(MapReader& m, const std::string& key, T& out, std::optional<T> (*parse)(const std::string&),
                 const std::string& known) {
  std::string s;
  if (!m.string(key, s)) return;
  const auto v = parse(s);
  if (v) {
    out = *v;
  } else {
    m.require(false, key, "unknown value '" + s + "' (known: " + known + ")");
  }
}

std::optional<core::DType> parse_dtype_str(const std::string& s) { return core::parse_dtype(s); }
std::optional<core::Pass> parse_pass(const std::string& s) {
  if (s == "fwd") return core::Pass::kFwd;
  if (s == "fwdbwd") return core::Pass::kFwdBwd;
  return std::nullopt;
}
std::optional<core::SimMode> parse_sim_mode(const std::string& s) {
  if (s == "full") return core::SimMode::kFull;
  if (s == "sampled") return core::SimMode::kSampled;
  return std::nullopt;
}
std::optional<core::CtaOrder> parse_order(const std::string& s) {
  if (s == "row-major") return core::CtaOrder::kRowMajor;
  if (s == "head-major") return core::CtaOrder::kHeadMajor;
  return std::nullopt;
}
std::optional<core::FunctionalInputs> parse_inputs(const std::string& s) {
  if (s == "normal") return core::FunctionalInputs::kNormal;
  if (s == "outliers") return core::FunctionalInputs::kOutliers;
  return std::nullopt;
}

std::optional<core::Fp8Scales> parse_fp8_scales(const std::string& s) {
  if (s == "head") return core::Fp8Scales::kHead;
  if (s == "block") return core::Fp8Scales::kBlock;
  if (s == "none") return core::Fp8Scales::kNone;
  return std::nullopt;
}

std::optional<core::PagePlacement> parse_placement(const std::string& s) {
  if (s == "contiguous") return core::PagePlacement::kContiguous;
  if (s == "shuffled") return core::PagePlacement::kShuffled;
  return std::nullopt;
}

// kv_lengths: `N` (every sequence), `[a, b, ...]` (one per sequence) or
// `{uniform: [min, max], seed: s}`; every length a positive integer. A string holding a list or
// a mapping (a sweep axis's value, which reaches here as the YAML text of that value) is read as
// the list or mapping it holds.
void read_kv_lengths(MapReader& m, core::KvLengths& out) {
  const YAML::Node given = m.get("kv_lengths");
  YAML::Node n;
  n.reset(given);  // rebinds the handle (operator= would overwrite the document's node)
  if (given.IsScalar() && !given.Scalar().empty() && (given.Scalar().front() == '[' || given.Scalar().front() == '{')) {
    try {
      const YAML::Node inner = YAML::Load(given.Scalar());
      if (inner.IsSequence() || inner.IsMap()) n.reset(inner);
    } catch (const YAML::Exception&) {  // not YAML: reported below as the scalar it is
    }
  }
  const std::string path = m.path_of("kv_lengths");
  YamlReader& r = m.reader();
  auto length = [&](const YAML::Node& v, const std::string& at) -> std::optional<std::uint64_t> {
    const auto x = r.as_u64(v, at, "a positive integer");
    if (x && *x == 0) {
      r.problem(v, at, "expected a positive integer, got 0");
      return std::nullopt;
    }
    return x;
  };
  if (n.IsScalar()) {
    if (const auto x = length(n, path)) {
      out = core::KvLengths{};
      out.fixed = *x;
    }
  } else if (n.IsSequence()) {
    if (n.size() == 0) r.problem(n, path, "empty list: give one length per sequence (batch entries)");
    core::KvLengths k;
    k.kind = core::KvLengths::Kind::kList;
    bool ok = true;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const auto x = length(n[i], path + "[" + std::to_string(i) + "]");
      ok = ok && x.has_value();
      if (x) k.list.push_back(*x);
    }
    if (ok && n.size() > 0) out = k;
  } else if (n.IsMap()) {
    MapReader sub(r, n, path);
    core::KvLengths k;
    k.kind = core::KvLengths::Kind::kUniform;
    const YAML::Node u = sub.child("uniform", Need::kRequired);
    bool ok = u.IsDefined();
    if (u.IsDefined() && (!u.IsSequence() || u.size() != 2)) {
      r.problem(u, path + ".uniform", "expected [min, max], got " + YamlReader::node_kind(u));
      ok = false;
    } else if (u.IsDefined()) {
      const auto lo = length(u[0], path + ".uniform[0]"), hi = length(u[1], path + ".uniform[1]");
      ok = lo && hi;
      if (ok && *lo > *hi) {
        r.problem(u, path + ".uniform",
                  "min (" + std::to_string(*lo) + ") is larger than max (" + std::to_string(*hi) + ")");
        ok = false;
      }
      if (ok) k.min = *lo, k.max = *hi;
    }
    sub.u64("seed", k.seed);
    sub.finish();
    if (ok) out = k;
  } else {
    r.problem(n, path,
              "expected a length, a list of lengths (one per sequence) or {uniform: [min, max], seed: s}, got " +
                  YamlReader::node_kind(n));
  }
}
std::optional<core::KernelImpl> parse_impl(const std::string& s) { return kernels::parse_kernel_impl(s); }

}  // namespace

const std::vector<std::string>& known_kernel_names() {
  static const std::vector<std::string> names = kernels::kernel_names();
  return names;
}

core::Workload parse_workload_node(const YAML::Node& node, YamlReader& reader) {
  core::Workload w;
  MapReader m(reader, node, "");
  if (!m.valid()) {
    if (!node.IsDefined() || node.IsNull()) reader.problem_at_line(0, "", "empty workload");
    return w;
  }
  if (m.string("kernel", w.kernel)) {
    const auto& known = known_kernel_names();
    if (std::find(known.begin(), known.end(), w.kernel) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      const std::string near = closest_match(w.kernel, known);
      m.require(false, "kernel",
              "unknown kernel '" + w.kernel + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                  "; known: " + list);
    }
  }
  // Rules on one key's own value use m.require (bad wherever the value appears); rules across
  // keys use m.check (a sweep records them as an impossible point).
  auto positive = [&](const char* key, std::uint64_t& v) {
    if (m.u64(key, v, Need::kOptional, "a positive integer")) m.require(v > 0, key, "expected a positive integer, got 0");
  };
  auto positive32 = [&](const char* key, std::uint32_t& v) {
    if (m.u32(key, v, Need::kOptional, "a positive integer"))
      m.require(v > 0, key, "expected a positive integer, got 0 (leave it out for the kernel's default)");
  };
  positive("batch", w.batch);
  positive("heads", w.heads);
  const bool has_kv = m.has("kv_heads");
  positive("kv_heads", w.kv_heads);
  std::uint64_t seq = 0;
  if (m.u64("seq", seq, Need::kOptional, "a positive integer")) {
    m.require(seq > 0, "seq", "expected a positive integer, got 0");
    w.seq_q = w.seq_kv = seq;
  }
  positive("seq_q", w.seq_q);
  positive("seq_kv", w.seq_kv);
  positive("head_dim", w.head_dim);
  read_choice<core::DType>(m, "dtype", w.dtype, &parse_dtype_str, "fp32, fp16, bf16, fp8");
  m.boolean("causal", w.causal);
  read_choice<core::Pass>(m, "pass", w.pass, &parse_pass, "fwd, fwdbwd");
  positive("block_m", w.block_m);
  positive("block_n", w.block_n);
  positive("block_k", w.block_k);
  if (m.u32("gemm_cluster", w.gemm_cluster))
    m.require(w.gemm_cluster == 1 || w.gemm_cluster == 2, "gemm_cluster",
            "must be 1 or 2 (CTAs per GEMM cluster; leave it out for the device's default)");
  positive32("warps", w.warps);
  positive32("stages", w.stages);
  read_choice<core::CtaOrder>(m, "cta_order", w.cta_order, &parse_order, "row-major, head-major");
  if (m.has("impl")) {
    read_choice<core::KernelImpl>(m, "impl", w.impl, &parse_impl, "fa2, triton");
    const kernels::KernelEntry* kernel = kernels::find_kernel(w.kernel);
    const bool reads = kernel && std::find(kernel->keys.begin(), kernel->keys.end(), "impl") != kernel->keys.end();
    m.check(reads || w.impl == core::KernelImpl::kFa2, "impl",
            "selects flash2's implementation (fa2, triton); kernel '" + w.kernel + "' has one implementation");
  }
  positive32("regs_per_thread", w.regs_per_thread);
  if (m.bytes("smem_per_cta", w.smem_per_cta)) m.require(w.smem_per_cta > 0, "smem_per_cta", "must be positive");
  if (m.u32("stack_frame_bytes", w.stack_frame_bytes)) {
    // CUDA allows up to 512 KiB of local memory per thread.
    m.require(w.stack_frame_bytes <= 512 * 1024, "stack_frame_bytes", "must be at most 524288 (512 KiB per thread)");
    const kernels::KernelEntry* kernel = kernels::find_kernel(w.kernel);
    m.check(w.stack_frame_bytes == 0 || (kernel && kernel->models_stack_frame), "stack_frame_bytes",
            "is modelled for the flash2 forward kernel only (kernel is '" + w.kernel + "')");
  }
  positive("num_splits", w.num_splits);
  m.u64("page_size", w.page_size);
  read_choice<core::PagePlacement>(m, "page_placement", w.page_placement, &parse_placement, "contiguous, shuffled");
  m.u64("page_seed", w.page_seed);
  const bool has_lengths = m.has("kv_lengths");
  if (has_lengths) read_kv_lengths(m, w.kv_lengths);
  // flash3's scheduling knobs: rejected for a kernel that does not read them.
  const kernels::KernelEntry* entry = kernels::find_kernel(w.kernel);
  auto reads_key = [&](std::string_view key) {
    return entry && std::find(entry->keys.begin(), entry->keys.end(), key) != entry->keys.end();
  };
  if (m.u32("consumer_warpgroups", w.consumer_warpgroups)) {
    m.require(w.consumer_warpgroups >= 1 && w.consumer_warpgroups <= 3, "consumer_warpgroups",
              "must be 1, 2 or 3 (consumer warp groups of 64 query rows; leave it out for FA-3's choice)");
    m.check(reads_key("consumer_warpgroups"), "consumer_warpgroups",
            "is not read by kernel '" + w.kernel + "'");
  }
  for (const char* key : {"pingpong", "intrawg_overlap", "tma"}) {
    bool on = false;
    if (!m.boolean(key, on)) continue;
    const std::string_view k(key);
    (k == "pingpong" ? w.pingpong : k == "intrawg_overlap" ? w.intrawg_overlap : w.tma) = on ? 1 : 0;
    m.check(reads_key(key), key, "is not read by kernel '" + w.kernel + "'");
  }
  if (m.bytes("sram_bytes", w.sram_bytes)) m.require(w.sram_bytes > 0, "sram_bytes", "must be positive");
  if (m.boolean("gemm_ws", w.gemm_ws))
    m.check(reads_key("gemm_ws") || !w.gemm_ws, "gemm_ws", "is not read by kernel '" + w.kernel + "'");
  if (m.boolean("qkv_packed", w.qkv_packed))
    m.check(reads_key("qkv_packed") || !w.qkv_packed, "qkv_packed", "is not read by kernel '" + w.kernel + "'");
  if (m.boolean("scale_kernel", w.scale_kernel))
    m.check(reads_key("scale_kernel") || !w.scale_kernel, "scale_kernel", "is not read by kernel '" + w.kernel + "'");
  if (m.string("pytorch", w.pytorch)) {  // the release whose eager softmax kernels run (standard)
    const auto r = core::parse_pytorch_release(w.pytorch);
    m.require(r.has_value(), "pytorch", "expected a PyTorch release such as 2.11 or 2.3, got '" + w.pytorch + "'");
    if (r) {
      m.require(*r >= std::make_pair(1, 2), "pytorch",
                "releases before 1.2 (no one-warp-per-row softmax kernel) are not modelled; got " + w.pytorch);
    }
    m.check(reads_key("pytorch") || w.pytorch == core::kDefaultPytorch, "pytorch",
            "is not read by kernel '" + w.kernel + "'");
  }
  m.boolean("functional", w.functional);
  m.u64("seed", w.seed);
  read_choice<core::FunctionalInputs>(m, "functional_inputs", w.functional_inputs, &parse_inputs, "normal, outliers");
  read_choice<core::Fp8Scales>(m, "fp8_scales", w.fp8_scales, &parse_fp8_scales, "head, block, none");
  if (m.boolean("incoherent_processing", w.incoherent_processing))
    m.check(!w.incoherent_processing || std::has_single_bit(w.head_dim), "incoherent_processing",
            "needs head_dim a power of 2 (a Hadamard transform of the head dimension); head_dim is " +
                std::to_string(w.head_dim));
  {  // sim: {mode: full | sampled, min_ops: N}
    MapReader sim(m.reader(), m.get("sim"), m.path_of("sim"));
    read_choice<core::SimMode>(sim, "mode", w.sim_mode, &parse_sim_mode, "full, sampled");
    sim.u64("min_ops", w.sim_min_ops, Need::kOptional, "a non-negative integer");
    sim.finish();
  }
  if (m.bytes("working_set_bytes", w.working_set_bytes))
    m.require(w.working_set_bytes > 0, "working_set_bytes", "must be positive");
  positive("loads", w.loads);
  positive("programs", w.programs);
  if (m.bytes("bytes_per_step", w.bytes_per_step)) m.require(w.bytes_per_step > 0, "bytes_per_step", "must be positive");
  if (m.bytes("total_bytes", w.total_bytes)) m.require(w.total_bytes > 0, "total_bytes", "must be positive");

  // Cross-field rules.
  if (!has_kv || w.kv_heads == 0) w.kv_heads = w.heads;
  if (w.qkv_packed) {
    m.check(w.kv_heads == w.heads, "qkv_packed",
            "needs kv_heads equal to heads (one packed [batch, seq, 3, heads, head_dim] tensor); kv_heads is " +
                std::to_string(w.kv_heads) + ", heads " + std::to_string(w.heads));
    m.check(w.seq_q == w.seq_kv, "qkv_packed",
            "needs seq_q equal to seq_kv (q, k, v are one packed tensor); seq_q is " + std::to_string(w.seq_q) +
                ", seq_kv " + std::to_string(w.seq_kv));
  }
  if (w.kv_heads > 0 && w.heads > 0)
    m.check(w.heads % w.kv_heads == 0, has_kv ? "kv_heads" : "heads",
            "heads (" + std::to_string(w.heads) + ") must be a multiple of kv_heads (" + std::to_string(w.kv_heads) + ")");
  // The paged-KV keys: only for a kernel that reads them (placement and seed do nothing with
  // page_size 0, so that a sweep may put 0 on a page_size axis), one length per sequence, none
  // beyond the cache capacity seq_kv (which defaults to the longest).
  {
    const kernels::KernelEntry* kernel = kernels::find_kernel(w.kernel);
    auto reads = [&](std::string_view key) {
      return kernel && std::find(kernel->keys.begin(), kernel->keys.end(), key) != kernel->keys.end();
    };
    for (const char* key : {"page_size", "page_placement", "page_seed", "kv_lengths"}) {
      if (!m.has(key) || (std::string_view(key) == "page_size" && w.page_size == 0)) continue;
      std::string readers;  // the kernels whose registry entries read the key
      for (const auto& e : kernels::kernel_registry())
        if (std::find(e.keys.begin(), e.keys.end(), std::string_view(key)) != e.keys.end())
          readers += (readers.empty() ? "" : ", ") + std::string(e.name);
      m.check(reads(key), key, "is read by " + readers + " only (kernel is '" + w.kernel + "')");
    }
    const core::KvLengths& k = w.kv_lengths;
    if (has_lengths && k.kind == core::KvLengths::Kind::kList)
      m.check(k.list.size() == w.batch, "kv_lengths",
              "lists " + std::to_string(k.list.size()) + " lengths for batch " + std::to_string(w.batch) +
                  " (one per sequence)");
    const std::uint64_t longest = k.kind == core::KvLengths::Kind::kFixed  ? k.fixed
                                  : k.kind == core::KvLengths::Kind::kUniform ? k.max
                                  : k.list.empty() ? 0 : *std::max_element(k.list.begin(), k.list.end());
    if (has_lengths && longest > 0) {
      if (!m.has("seq_kv") && !m.has("seq")) w.seq_kv = longest;
      m.check(longest <= w.seq_kv, "kv_lengths",
              "the longest length (" + std::to_string(longest) + ") exceeds seq_kv (" + std::to_string(w.seq_kv) +
                  "), the cache capacity; leave seq_kv out to size it to the longest");
    }
  }
  // Every tensor's byte count must fit in 64 bits: Q/O (seq_q x d), K/V (seq_kv x d), S/P (seq_q x seq_kv).
  std::uint64_t bh = 0, q = 0, kv = 0, s = 0, t = 0;
  const bool fits = mul(w.batch, w.heads, bh) && mul(bh, w.value_bytes(), bh) && mul(bh, w.seq_q, q) &&
                    mul(q, w.head_dim, t) && mul(bh, w.seq_kv, kv) && mul(kv, w.head_dim, t) && mul(q, w.seq_kv, s);
  const char* size_key = m.has("seq_q") ? "seq_q" : m.has("seq") ? "seq" : "batch";
  m.check(fits, size_key, "batch x heads x sequence lengths x head_dim x bytes per value overflows 64 bits");
  m.finish();
  return w;
}

core::Workload parse_workload_node(const YAML::Node& node, const std::string& file) {
  YamlReader reader(file);
  core::Workload w = parse_workload_node(node, reader);
  reader.throw_if_problems();
  return w;
}

core::ConfigError locate_workload_problems(const core::ConfigError& e, const std::string& path,
                                           const std::vector<Override>& overrides) {
  std::vector<core::ConfigProblem> problems = e.problems();
  YAML::Node root;
  try {
    if (!path.empty()) root = YAML::LoadFile(path);
  } catch (const YAML::Exception&) {
    return e;  // the file loaded once already; leave the problems as they are
  }
  const YAML::Node& map = root;  // const: looking a key up must not add it
  for (core::ConfigProblem& p : problems) {
    if (!p.file.empty() || p.line != 0 || p.key_path.empty() || p.key_path.rfind("--", 0) == 0) continue;
    const auto o = std::find_if(overrides.rbegin(), overrides.rend(),
                                [&](const Override& x) { return x.key == p.key_path; });
    if (o != overrides.rend()) {
      if (o->origin.file.empty() && o->origin.label.empty()) {
        p.key_path = "--set " + p.key_path;
      } else {
        p.file = o->origin.file;
        p.line = o->origin.line;
        p.key_path = o->origin.label;
      }
    } else if (map.IsMap() && map[p.key_path].IsDefined()) {
      p.file = path;
      p.line = YamlReader::line_of(map[p.key_path]);
    }
  }
  return core::ConfigError(std::move(problems));
}

void apply_workload_overrides(YAML::Node& node, const std::vector<Override>& overrides, YamlReader& reader) {
  for (const auto& o : overrides) {
    if (o.key == "seq" && node.IsMap()) {
      node.remove("seq_q");
      node.remove("seq_kv");
    }
    apply_overrides(node, {o}, reader);
  }
}

std::vector<core::ConfigProblem> workload_value_problems(const std::vector<Override>& overrides,
                                                         const std::string& file) {
  YAML::Node root(YAML::NodeType::Map);
  YamlReader reader(file);
  apply_workload_overrides(root, overrides, reader);
  parse_workload_node(root, reader);
  return reader.value_problems();
}

namespace {

// Moves `device:` and `device_overrides:` out of a workload file's mapping into `out`.
void take_file_device(YAML::Node& root, const std::string& path, YamlReader& reader, WorkloadFileDevice& out) {
  const auto line = [](const YAML::Node& n) { return n.Mark().line + 1; };
  if (const YAML::Node d = root["device"]) {
    if (d.IsScalar() && !d.Scalar().empty()) out.name = d.Scalar();
    else reader.problem_at_line(line(d), "device", "expected a device preset name or device YAML path");
    root.remove("device");
  }
  if (const YAML::Node o = root["device_overrides"]) {
    if (!o.IsMap()) reader.problem_at_line(line(o), "device_overrides", "expected a mapping of device keys to values");
    else
      for (const auto& kv : o) {
        const std::string key = kv.first.Scalar();
        std::string value = kv.second.IsScalar() ? kv.second.Scalar() : "";
        if (!kv.second.IsScalar()) {  // a list (sm.shared_mem_carveouts_bytes) as its YAML text
          YAML::Emitter e;
          e << YAML::Flow << kv.second;
          value = e.c_str();
        }
        out.overrides.push_back({key, value, ValueOrigin{path, line(kv.second), "device_overrides." + key}});
      }
    root.remove("device_overrides");
  }
}

}  // namespace

core::Workload load_workload_file(const std::string& path, const std::vector<Override>& overrides,
                                  WorkloadFileDevice* device) {
  require_readable_file(path, "", "workload file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw core::ConfigError(core::ConfigProblem{path, 0, "", "workload file not found or unreadable"});
  } catch (const YAML::ParserException& e) {
    throw core::ConfigError(core::ConfigProblem{path, e.mark.line + 1, "", "malformed YAML: " + e.msg});
  }
  YamlReader reader(path);
  if (root.IsNull() && !overrides.empty()) root = YAML::Node(YAML::NodeType::Map);
  if (device && root.IsMap()) take_file_device(root, path, reader, *device);
  apply_workload_overrides(root, overrides, reader);
  core::Workload w = parse_workload_node(root, reader);
  reader.throw_if_problems();
  return w;
}

core::Workload workload_for_kernel(const std::string& kernel, const std::vector<Override>& overrides) {
  YAML::Node root(YAML::NodeType::Map);
  root["kernel"] = kernel;
  YamlReader reader("");
  reader.mark_overridden("kernel", {"", 0, "--kernel"});
  apply_workload_overrides(root, overrides, reader);
  core::Workload w = parse_workload_node(root, reader);
  reader.throw_if_problems();
  return w;
}

std::string workload_to_yaml(const core::Workload& w) {
  std::ostringstream o;
  o << "kernel: " << w.kernel << "\n"
    << "batch: " << w.batch << "\n"
    << "heads: " << w.heads << "\n"
    << "kv_heads: " << (w.kv_heads ? w.kv_heads : w.heads) << "\n"
    << "seq_q: " << w.seq_q << "\n"
    << "seq_kv: " << w.seq_kv << "\n"
    << "head_dim: " << w.head_dim << "\n"
    << "dtype: " << core::to_string(w.dtype) << "\n"
    << "causal: " << (w.causal ? "true" : "false") << "\n"
    << "pass: " << core::to_string(w.pass) << "\n"
    << "cta_order: " << core::to_string(w.cta_order) << "\n"
    << "functional: " << (w.functional ? "true" : "false") << "\n"
    << "seed: " << w.seed << "\n";
  if (w.functional_inputs != core::FunctionalInputs::kNormal)
    o << "functional_inputs: " << core::to_string(w.functional_inputs) << "\n";
  if (w.fp8_scales != core::Fp8Scales::kHead) o << "fp8_scales: " << core::to_string(w.fp8_scales) << "\n";
  if (w.incoherent_processing) o << "incoherent_processing: true\n";
  if (w.sim_mode != core::SimMode::kFull || w.sim_min_ops != core::kDefaultSampledMinOps) {
    o << "sim:\n  mode: " << core::to_string(w.sim_mode) << "\n";
    if (w.sim_min_ops != core::kDefaultSampledMinOps) o << "  min_ops: " << w.sim_min_ops << "\n";
  }
  // Zero means "the kernel's default" and is written by leaving the key out.
  auto opt = [&](const char* key, std::uint64_t v) {
    if (v) o << key << ": " << v << "\n";
  };
  opt("block_m", w.block_m);
  opt("block_n", w.block_n);
  opt("block_k", w.block_k);
  opt("gemm_cluster", w.gemm_cluster);
  if (w.gemm_ws) o << "gemm_ws: true\n";
  if (w.qkv_packed) o << "qkv_packed: true\n";
  if (w.scale_kernel) o << "scale_kernel: true\n";
  if (w.pytorch != core::kDefaultPytorch) o << "pytorch: \"" << w.pytorch << "\"\n";
  opt("warps", w.warps);
  opt("stages", w.stages);
  if (w.impl != core::KernelImpl::kFa2) o << "impl: " << core::to_string(w.impl) << "\n";
  opt("regs_per_thread", w.regs_per_thread);
  opt("smem_per_cta", w.smem_per_cta);
  opt("stack_frame_bytes", w.stack_frame_bytes);
  opt("num_splits", w.num_splits);
  opt("page_size", w.page_size);
  if (w.page_placement != core::PagePlacement::kContiguous)
    o << "page_placement: " << core::to_string(w.page_placement) << "\n";
  if (w.page_seed != 1) o << "page_seed: " << w.page_seed << "\n";
  if (const std::string k = core::to_string(w.kv_lengths); !k.empty()) o << "kv_lengths: " << k << "\n";
  opt("consumer_warpgroups", w.consumer_warpgroups);
  if (w.pingpong >= 0) o << "pingpong: " << (w.pingpong ? "true" : "false") << "\n";
  if (w.intrawg_overlap >= 0) o << "intrawg_overlap: " << (w.intrawg_overlap ? "true" : "false") << "\n";
  if (w.tma >= 0) o << "tma: " << (w.tma ? "true" : "false") << "\n";
  opt("sram_bytes", w.sram_bytes);
  opt("working_set_bytes", w.working_set_bytes);
  opt("loads", w.loads);
  opt("programs", w.programs);
  opt("bytes_per_step", w.bytes_per_step);
  opt("total_bytes", w.total_bytes);
  return o.str();
}

std::string device_for_run(const std::string& given, const WorkloadFileDevice& file,
                           std::vector<Override>& device_overrides, const std::string& fallback) {
  if (!given.empty()) return given;
  if (file.name.empty()) return fallback;
  device_overrides.insert(device_overrides.begin(), file.overrides.begin(), file.overrides.end());
  return file.name;
}

std::string point_config_yaml(const core::Workload& w, const std::string& device,
                              const std::vector<Override>& device_overrides) {
  std::ostringstream cfg;
  cfg << workload_to_yaml(w) << "device: " << device << "\n";
  if (!device_overrides.empty()) {
    cfg << "device_overrides:\n";
    for (const auto& o : device_overrides) cfg << "  " << o.key << ": " << o.value << "\n";
  }
  return cfg.str();
}

}  // namespace attnsim::config
