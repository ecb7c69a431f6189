#include "sim/config/device_loader.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "sim/config/input_file.h"
#include "sim/config/map_reader.h"

#ifndef ATTNSIM_SOURCE_DIR
#define ATTNSIM_SOURCE_DIR ""
#endif

namespace attnsim::config {

namespace fs = std::filesystem;

namespace {

bool is_pow2(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
std::string format_double(double v);

void read_hbm(MapReader m, core::HbmSpec& h) {
  if (!m.valid()) return;
  if (m.bytes("capacity_bytes", h.capacity_bytes, Need::kRequired))
    m.require(h.capacity_bytes > 0, "capacity_bytes", "must be positive");
  if (m.u32("channels", h.channels)) m.require(h.channels > 0, "channels", "must be positive");
  if (m.bytes("interleave_bytes", h.interleave_bytes))
    m.require(is_pow2(h.interleave_bytes), "interleave_bytes", "must be a power of two, got " + std::to_string(h.interleave_bytes));
  if (m.number("bandwidth_gbps", h.bandwidth_gbps, Need::kRequired))
    m.require(h.bandwidth_gbps > 0, "bandwidth_gbps", "must be positive");
  if (m.number("write_bandwidth_gbps", h.write_bandwidth_gbps))
    m.require(h.write_bandwidth_gbps > 0, "write_bandwidth_gbps", "must be positive (leave it out for bandwidth_gbps)");
  m.u64("latency_cycles", h.latency_cycles, Need::kRequired);
  m.finish();
}

void read_l2(MapReader m, core::L2Spec& l2) {
  if (!m.valid()) return;
  const bool has_capacity = m.bytes("capacity_bytes", l2.capacity_bytes, Need::kRequired);
  const bool enabled = !has_capacity || l2.capacity_bytes > 0;
  const bool line_ok = m.bytes("line_bytes", l2.line_bytes);
  const bool sector_ok = m.bytes("sector_bytes", l2.sector_bytes);
  if (line_ok) m.require(is_pow2(l2.line_bytes), "line_bytes", "must be a power of two, got " + std::to_string(l2.line_bytes));
  if (sector_ok)
    m.require(is_pow2(l2.sector_bytes), "sector_bytes", "must be a power of two, got " + std::to_string(l2.sector_bytes));
  if (is_pow2(l2.line_bytes) && is_pow2(l2.sector_bytes))
    m.check(l2.line_bytes % l2.sector_bytes == 0, "line_bytes",
            "must be a multiple of sector_bytes (" + std::to_string(l2.sector_bytes) + ")");
  if (m.u32("associativity", l2.associativity)) {
    m.require(is_pow2(l2.associativity), "associativity", "must be a power of two, got " + std::to_string(l2.associativity));
    // The engine's tag store ranks the ways of a set in signed bytes (SetAssocArray::kMaxWays).
    if (is_pow2(l2.associativity))
      m.require(l2.associativity <= 128, "associativity", "must be at most 128, got " + std::to_string(l2.associativity));
  }
  if (m.u32("partitions", l2.partitions)) m.require(l2.partitions > 0, "partitions", "must be positive");
  const Need when_enabled = enabled ? Need::kRequired : Need::kOptional;
  m.u64("near_hit_latency_cycles", l2.near_hit_latency_cycles, when_enabled);
  if (!m.u64("far_hit_latency_cycles", l2.far_hit_latency_cycles)) l2.far_hit_latency_cycles = l2.near_hit_latency_cycles;
  m.check(l2.far_hit_latency_cycles >= l2.near_hit_latency_cycles, "far_hit_latency_cycles",
          "must be at least near_hit_latency_cycles");
  if (m.number("bandwidth_gbps", l2.bandwidth_gbps, when_enabled))
    m.check(l2.bandwidth_gbps > 0 || (!enabled && l2.bandwidth_gbps == 0), "bandwidth_gbps", "must be positive");
  if (m.string("replacement", l2.replacement))
    m.require(l2.replacement == "lru", "replacement", "unknown policy '" + l2.replacement + "' (known: lru)");
  m.boolean("count_final_writeback", l2.count_final_writeback);
  if (m.boolean("carry_writeback", l2.carry_writeback))
    m.check(!l2.carry_writeback || l2.count_final_writeback, "carry_writeback",
            "needs count_final_writeback true (a timer of back-to-back launches sees every write-back)");
  m.boolean("wait_for_pending_fills", l2.wait_for_pending_fills);
  if (m.bytes("tracking_bytes", l2.tracking_bytes) && l2.tracking_bytes != 0) {
    const bool pow2 = is_pow2(l2.tracking_bytes);
    m.require(pow2, "tracking_bytes", "must be 0 or a power of two, got " + std::to_string(l2.tracking_bytes));
    if (pow2 && is_pow2(l2.line_bytes) && is_pow2(l2.sector_bytes)) {
      m.check(l2.tracking_bytes >= l2.line_bytes, "tracking_bytes",
              "must be at least line_bytes (" + std::to_string(l2.line_bytes) + ")");
      m.check(l2.tracking_bytes <= 64 * l2.sector_bytes, "tracking_bytes",
              "must be at most 64 sectors (" + std::to_string(64 * l2.sector_bytes) + " bytes)");
      if (l2.capacity_bytes > 0 && is_pow2(l2.associativity))
        m.check(l2.capacity_bytes % (l2.tracking_bytes * l2.associativity * std::max<std::uint32_t>(1, l2.partitions)) == 0,
                "tracking_bytes", "capacity_bytes must be a multiple of tracking_bytes x associativity x partitions");
    }
  }
  if (l2.capacity_bytes > 0 && is_pow2(l2.line_bytes) && is_pow2(l2.associativity)) {
    const std::uint64_t set_bytes = l2.line_bytes * l2.associativity;
    m.check(l2.capacity_bytes % set_bytes == 0, "capacity_bytes",
            "must be a multiple of line_bytes x associativity (" + std::to_string(set_bytes) + ")");
  }
  m.finish();
}

// sm.mma.<flavour>: one MMA instruction flavour (core::MmaFlavourSpec).
void read_mma_flavour(MapReader m, core::MmaFlavourSpec& f) {
  if (!m.valid()) return;
  f.present = true;
  if (m.number("flops_per_cycle", f.flops_per_cycle, Need::kRequired))
    m.require(f.flops_per_cycle > 0, "flops_per_cycle", "must be positive");
  if (m.number("latency_cycles", f.latency_cycles, Need::kRequired))
    m.require(f.latency_cycles >= 0, "latency_cycles", "must not be negative");
  auto dim = [&](const char* key, std::uint32_t& v) {
    if (m.u32(key, v, Need::kRequired)) m.require(v > 0, key, "must be positive");
  };
  dim("m", f.m);
  dim("n", f.n);
  dim("k", f.k);
  if (m.u32("issue_warps", f.issue_warps))
    m.require(f.issue_warps == 1 || f.issue_warps == 4, "issue_warps",
              "must be 1 (a warp issues the instruction) or 4 (a warp group does)");
  if (m.number("fp8_scale", f.fp8_scale)) m.require(f.fp8_scale >= 0, "fp8_scale", "must not be negative");
  if (m.number("tf32_scale", f.tf32_scale)) m.require(f.tf32_scale >= 0, "tf32_scale", "must not be negative");
  m.finish();
}

void read_mma(MapReader m, core::MmaFlavours& mma, double tensor_flops_per_cycle) {
  if (!m.valid()) return;
  read_mma_flavour(MapReader(m.reader(), m.get("mma_sync"), m.path_of("mma_sync")), mma.mma_sync);
  read_mma_flavour(MapReader(m.reader(), m.get("wgmma"), m.path_of("wgmma")), mma.wgmma);
  read_mma_flavour(MapReader(m.reader(), m.get("tcgen05"), m.path_of("tcgen05")), mma.tcgen05);
  // The dense peak (tensor_flops_per_cycle) bounds every flavour: the flavours share the pipe.
  // The error names the flavour's flops_per_cycle line, where the offending number is.
  for (const auto& [key, f] : {std::pair{"mma_sync", &mma.mma_sync}, std::pair{"wgmma", &mma.wgmma},
                               std::pair{"tcgen05", &mma.tcgen05}})
    if (f->present && tensor_flops_per_cycle > 0) {
      MapReader flavour(m.reader(), m.get(key), m.path_of(key));
      flavour.check(f->flops_per_cycle <= tensor_flops_per_cycle, "flops_per_cycle",
                    "exceeds sm.tensor_flops_per_cycle (" + format_double(tensor_flops_per_cycle) +
                        "), the tensor pipe's dense peak");
    }
  m.finish();
}

void read_sm(MapReader m, core::SmSpec& sm, bool gpu, double clock_ghz) {
  if (!m.valid()) return;
  auto positive_u32 = [&](const char* key, std::uint32_t& v, Need need = Need::kOptional) {
    if (m.u32(key, v, need)) m.require(v > 0, key, "must be positive");
  };
  auto pow2_u32 = [&](const char* key, std::uint32_t& v) {
    if (m.u32(key, v)) m.require(is_pow2(v), key, "must be a power of two, got " + std::to_string(v));
  };
  auto pow2_bytes = [&](const char* key, core::Bytes& v) {
    if (m.bytes(key, v)) m.require(is_pow2(v), key, "must be a power of two, got " + std::to_string(v));
  };
  const Need gpu_need = gpu ? Need::kRequired : Need::kOptional;
  positive_u32("count", sm.count, Need::kRequired);
  pow2_u32("warp_size", sm.warp_size);
  positive_u32("max_threads_per_sm", sm.max_threads_per_sm);
  positive_u32("max_warps_per_sm", sm.max_warps_per_sm);
  positive_u32("max_blocks_per_sm", sm.max_blocks_per_sm);
  positive_u32("max_threads_per_block", sm.max_threads_per_block);
  positive_u32("registers_per_sm", sm.registers_per_sm);
  positive_u32("max_registers_per_thread", sm.max_registers_per_thread);
  positive_u32("max_registers_per_block", sm.max_registers_per_block);
  pow2_u32("register_allocation_unit", sm.register_allocation_unit);
  positive_u32("schedulers_per_sm", sm.schedulers_per_sm);
  if (m.bytes("shared_mem_per_sm_bytes", sm.shared_mem_per_sm_bytes, gpu_need) && gpu)
    m.require(sm.shared_mem_per_sm_bytes > 0, "shared_mem_per_sm_bytes", "must be positive");
  m.bytes("shared_mem_per_block_optin_bytes", sm.shared_mem_per_block_optin_bytes, gpu_need);
  m.bytes("shared_mem_reserved_per_block_bytes", sm.shared_mem_reserved_per_block_bytes);
  pow2_bytes("shared_mem_allocation_unit_bytes", sm.shared_mem_allocation_unit_bytes);
  m.bytes("l1_shared_total_bytes", sm.l1_shared_total_bytes);
  const YAML::Node carveouts = m.get("shared_mem_carveouts_bytes");
  if (carveouts.IsDefined()) {
    const std::string path = m.path_of("shared_mem_carveouts_bytes");
    if (!carveouts.IsSequence()) {
      m.reader().problem(carveouts, path, "expected a list of byte counts, got " + YamlReader::node_kind(carveouts));
    } else {
      sm.shared_mem_carveouts_bytes.clear();
      for (std::size_t i = 0; i < carveouts.size(); ++i) {
        const auto v = m.reader().as_bytes(carveouts[i], path + "[" + std::to_string(i) + "]");
        if (v) sm.shared_mem_carveouts_bytes.push_back(*v);
      }
      const auto& c = sm.shared_mem_carveouts_bytes;
      m.check(std::is_sorted(c.begin(), c.end()) && std::adjacent_find(c.begin(), c.end()) == c.end(),
              "shared_mem_carveouts_bytes", "must be strictly ascending");
      if (!c.empty())
        m.check(c.back() <= sm.shared_mem_per_sm_bytes, "shared_mem_carveouts_bytes",
                "largest carve-out (" + std::to_string(c.back()) + ") exceeds shared_mem_per_sm_bytes (" +
                    std::to_string(sm.shared_mem_per_sm_bytes) + ")");
      if (!c.empty() && sm.l1_shared_total_bytes > 0)
        m.check(c.back() <= sm.l1_shared_total_bytes, "shared_mem_carveouts_bytes", "exceeds l1_shared_total_bytes");
    }
  }
  pow2_u32("shared_mem_banks", sm.shared_mem_banks);
  pow2_bytes("shared_mem_bank_bytes", sm.shared_mem_bank_bytes);
  m.u64("shared_mem_latency_cycles", sm.shared_mem_latency_cycles);
  m.boolean("l1_caches_global_loads", sm.l1_caches_global_loads);
  m.u64("l1_hit_latency_cycles", sm.l1_hit_latency_cycles);
  if (m.number("tensor_flops_per_cycle", sm.tensor_flops_per_cycle, Need::kRequired))
    m.require(sm.tensor_flops_per_cycle > 0, "tensor_flops_per_cycle", "must be positive");
  if (m.number("tensor_clock_ghz", sm.tensor_clock_ghz))
    m.require(sm.tensor_clock_ghz >= 0 && sm.tensor_clock_ghz <= clock_ghz, "tensor_clock_ghz",
              "must be between 0 and clock_ghz (" + format_double(clock_ghz) +
                  "); with a lower clock_ghz set sm.tensor_clock_ghz too");
  if (m.number("fp32_flops_per_cycle", sm.fp32_flops_per_cycle))
    m.require(sm.fp32_flops_per_cycle >= 0, "fp32_flops_per_cycle", "must not be negative");
  if (m.number("exp_per_cycle", sm.exp_per_cycle, Need::kRequired))
    m.require(sm.exp_per_cycle > 0, "exp_per_cycle", "must be positive");
  m.boolean("sfu_holds_tensor", sm.sfu_holds_tensor);
  m.boolean("fp32_holds_tensor", sm.fp32_holds_tensor);
  m.bytes("max_inflight_bytes_per_sm", sm.max_inflight_bytes_per_sm);
  m.bytes("max_inflight_bytes_per_warp", sm.max_inflight_bytes_per_warp);
  m.boolean("queue_async_copies", sm.queue_async_copies);
  m.boolean("async_fills_take_banks", sm.async_fills_take_banks);
  if (m.number("load_bytes_per_cycle", sm.load_bytes_per_cycle))
    m.require(sm.load_bytes_per_cycle >= 0, "load_bytes_per_cycle", "must not be negative");
  read_mma(MapReader(m.reader(), m.get("mma"), m.path_of("mma")), sm.mma, sm.tensor_flops_per_cycle);

  // Cross-field limits.
  m.check(sm.shared_mem_per_block_optin_bytes <= sm.shared_mem_per_sm_bytes, "shared_mem_per_block_optin_bytes",
          std::to_string(sm.shared_mem_per_block_optin_bytes) + " bytes per block exceed shared_mem_per_sm_bytes (" +
              std::to_string(sm.shared_mem_per_sm_bytes) + ")");
  if (sm.l1_shared_total_bytes > 0)
    m.check(sm.shared_mem_per_sm_bytes <= sm.l1_shared_total_bytes, "shared_mem_per_sm_bytes",
            "exceeds l1_shared_total_bytes (" + std::to_string(sm.l1_shared_total_bytes) + ")");
  if (sm.warp_size > 0)
    m.check(std::uint64_t{sm.max_warps_per_sm} * sm.warp_size >= sm.max_threads_per_sm, "max_warps_per_sm",
            "max_warps_per_sm x warp_size is below max_threads_per_sm");
  m.check(sm.max_threads_per_block <= sm.max_threads_per_sm, "max_threads_per_block", "exceeds max_threads_per_sm");
  m.check(sm.max_registers_per_block <= sm.registers_per_sm, "max_registers_per_block", "exceeds registers_per_sm");
  m.check(sm.max_inflight_bytes_per_warp <= sm.max_inflight_bytes_per_sm || sm.max_inflight_bytes_per_sm == 0,
          "max_inflight_bytes_per_warp", "exceeds max_inflight_bytes_per_sm");
  m.finish();
}

void read_scratchpad(MapReader m, core::ScratchpadSpec& s) {
  if (!m.valid()) return;
  if (m.bytes("sram_bytes_per_core", s.sram_bytes_per_core, Need::kRequired))
    m.require(s.sram_bytes_per_core > 0, "sram_bytes_per_core", "must be positive");
  if (m.u32("dma_engines", s.dma_engines, Need::kRequired)) m.require(s.dma_engines > 0, "dma_engines", "must be positive");
  if (m.number("dma_bytes_per_cycle", s.dma_bytes_per_cycle, Need::kRequired))
    m.require(s.dma_bytes_per_cycle > 0, "dma_bytes_per_cycle", "must be positive");
  m.u64("dma_latency_cycles", s.dma_latency_cycles, Need::kRequired);
  m.finish();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::vector<std::string> presets_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string format_double(double v) {
  char buf[64];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, ec == std::errc() ? ptr : buf);
  // Keep a decimal point so the value reads back as a number either way.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

core::DeviceSpec parse_device_node(const YAML::Node& node, YamlReader& reader) {
  core::DeviceSpec d;
  d.source_file = reader.file();
  MapReader top(reader, node, "");
  if (!top.valid()) {
    if (!node.IsDefined() || node.IsNull()) reader.problem_at_line(0, "", "empty device file");
    return d;
  }
  if (top.string("name", d.name, Need::kRequired)) top.require(!d.name.empty(), "name", "must not be empty");
  std::string kind = "gpu";
  if (top.string("kind", kind, Need::kRequired)) {
    top.require(kind == "gpu" || kind == "scratchpad", "kind", "unknown kind '" + kind + "' (known: gpu, scratchpad)");
    d.kind = kind == "scratchpad" ? core::DeviceKind::kScratchpad : core::DeviceKind::kGpu;
  }
  const bool gpu = d.kind == core::DeviceKind::kGpu;
  if (top.u32("compute_capability", d.compute_capability))
    top.require(d.compute_capability >= 10, "compute_capability", "expected major*10 + minor, e.g. 90");
  if (top.number("clock_ghz", d.clock_ghz, Need::kRequired)) top.require(d.clock_ghz > 0, "clock_ghz", "must be positive");
  read_hbm(MapReader(reader, top.child("hbm", Need::kRequired), "hbm"), d.hbm);
  d.l2.capacity_bytes = gpu ? d.l2.capacity_bytes : 0;
  read_l2(MapReader(reader, top.child("l2", gpu ? Need::kRequired : Need::kOptional), "l2"), d.l2);
  read_sm(MapReader(reader, top.child("sm", Need::kRequired), "sm"), d.sm, gpu, d.clock_ghz);
  read_scratchpad(MapReader(reader, top.child("scratchpad", gpu ? Need::kOptional : Need::kRequired), "scratchpad"),
                  d.scratchpad);
  top.finish();
  return d;
}

std::vector<std::string> device_search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ATTNSIM_CONFIG_DIR"); env && *env) {
    dirs.push_back((fs::path(env) / "devices").string());
    dirs.push_back(env);
  }
  if (std::string(ATTNSIM_SOURCE_DIR).size() > 0) dirs.push_back((fs::path(ATTNSIM_SOURCE_DIR) / "configs" / "devices").string());
  if (const std::string exe = executable_dir(); !exe.empty()) {
    dirs.push_back((fs::path(exe) / ".." / "configs" / "devices").lexically_normal().string());
    dirs.push_back((fs::path(exe) / "configs" / "devices").string());
  }
  return dirs;
}

std::vector<std::string> device_preset_names() {
  for (const auto& dir : device_search_dirs()) {
    auto names = presets_in(dir);
    if (!names.empty()) return names;
  }
  return {};
}

namespace {

// The device file `name_or_path` names (`path` set to it), read as YAML. Throws ConfigError.
YAML::Node load_device_root(const std::string& name_or_path, std::string& path) {
  path.clear();
  const bool is_path = ends_with(name_or_path, ".yaml") || ends_with(name_or_path, ".yml") ||
                       name_or_path.find('/') != std::string::npos;
  if (is_path) {
    if (!fs::is_regular_file(name_or_path))
      throw core::ConfigError(core::ConfigProblem{name_or_path, 0, "", "device file not found"});
    path = name_or_path;
  } else {
    for (const auto& dir : device_search_dirs()) {
      const fs::path candidate = fs::path(dir) / (name_or_path + ".yaml");
      if (fs::is_regular_file(candidate)) {
        path = candidate.string();
        break;
      }
    }
    if (path.empty()) {
      std::string known;
      for (const auto& n : device_preset_names()) known += (known.empty() ? "" : ", ") + n;
      throw core::ConfigError(core::ConfigProblem{"", 0, "--device",
                                                  "unknown device preset '" + name_or_path +
                                                      "' (available: " + (known.empty() ? "none found" : known) +
                                                      "; or give a path to a .yaml file)"});
    }
  }
  require_readable_file(path, "", "device file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::ParserException& e) {
    throw core::ConfigError(core::ConfigProblem{path, e.mark.line + 1, "", "malformed YAML: " + e.msg});
  } catch (const YAML::Exception& e) {
    throw core::ConfigError(core::ConfigProblem{path, 0, "", "cannot read: " + e.msg});
  }
  return root;
}

}  // namespace

core::DeviceSpec load_device(const std::string& name_or_path, const std::vector<Override>& device_overrides) {
  std::string path;
  YAML::Node root = load_device_root(name_or_path, path);
  YamlReader reader(path, "device.");
  apply_overrides(root, device_overrides, reader);
  core::DeviceSpec d = parse_device_node(root, reader);
  reader.throw_if_problems();
  return d;
}

std::vector<core::ConfigProblem> device_value_problems(const std::string& name_or_path,
                                                       const std::vector<Override>& device_overrides) {
  std::string path;
  YAML::Node root = load_device_root(name_or_path, path);
  YamlReader reader(path, "device.");
  apply_overrides(root, device_overrides, reader);
  parse_device_node(root, reader);
  return reader.value_problems();
}

std::string device_to_yaml(const core::DeviceSpec& d) {
  std::ostringstream o;
  o << "name: " << quote(d.name) << "\n";
  o << "kind: " << (d.kind == core::DeviceKind::kGpu ? "gpu" : "scratchpad") << "\n";
  o << "compute_capability: " << d.compute_capability << "\n";
  o << "clock_ghz: " << format_double(d.clock_ghz) << "\n";
  o << "hbm:\n"
    << "  capacity_bytes: " << d.hbm.capacity_bytes << "\n"
    << "  channels: " << d.hbm.channels << "\n"
    << "  interleave_bytes: " << d.hbm.interleave_bytes << "\n"
    << "  bandwidth_gbps: " << format_double(d.hbm.bandwidth_gbps) << "\n";
  if (d.hbm.write_bandwidth_gbps > 0) o << "  write_bandwidth_gbps: " << format_double(d.hbm.write_bandwidth_gbps) << "\n";
  o << "  latency_cycles: " << d.hbm.latency_cycles << "\n";
  const auto& l2 = d.l2;
  o << "l2:\n"
    << "  capacity_bytes: " << l2.capacity_bytes << "\n"
    << "  line_bytes: " << l2.line_bytes << "\n"
    << "  sector_bytes: " << l2.sector_bytes << "\n"
    << "  associativity: " << l2.associativity << "\n"
    << "  partitions: " << l2.partitions << "\n"
    << "  near_hit_latency_cycles: " << l2.near_hit_latency_cycles << "\n"
    << "  far_hit_latency_cycles: " << l2.far_hit_latency_cycles << "\n"
    << "  bandwidth_gbps: " << format_double(l2.bandwidth_gbps) << "\n"
    << "  replacement: " << quote(l2.replacement) << "\n"
    << "  count_final_writeback: " << (l2.count_final_writeback ? "true" : "false") << "\n"
    << "  carry_writeback: " << (l2.carry_writeback ? "true" : "false") << "\n"
    << "  wait_for_pending_fills: " << (l2.wait_for_pending_fills ? "true" : "false") << "\n"
    << "  tracking_bytes: " << l2.tracking_bytes << "\n";
  const auto& sm = d.sm;
  o << "sm:\n"
    << "  count: " << sm.count << "\n"
    << "  warp_size: " << sm.warp_size << "\n"
    << "  max_threads_per_sm: " << sm.max_threads_per_sm << "\n"
    << "  max_warps_per_sm: " << sm.max_warps_per_sm << "\n"
    << "  max_blocks_per_sm: " << sm.max_blocks_per_sm << "\n"
    << "  max_threads_per_block: " << sm.max_threads_per_block << "\n"
    << "  registers_per_sm: " << sm.registers_per_sm << "\n"
    << "  max_registers_per_thread: " << sm.max_registers_per_thread << "\n"
    << "  max_registers_per_block: " << sm.max_registers_per_block << "\n"
    << "  register_allocation_unit: " << sm.register_allocation_unit << "\n"
    << "  schedulers_per_sm: " << sm.schedulers_per_sm << "\n"
    << "  shared_mem_per_sm_bytes: " << sm.shared_mem_per_sm_bytes << "\n"
    << "  shared_mem_per_block_optin_bytes: " << sm.shared_mem_per_block_optin_bytes << "\n"
    << "  shared_mem_reserved_per_block_bytes: " << sm.shared_mem_reserved_per_block_bytes << "\n"
    << "  shared_mem_allocation_unit_bytes: " << sm.shared_mem_allocation_unit_bytes << "\n"
    << "  shared_mem_carveouts_bytes: [";
  for (std::size_t i = 0; i < sm.shared_mem_carveouts_bytes.size(); ++i)
    o << (i ? ", " : "") << sm.shared_mem_carveouts_bytes[i];
  o << "]\n"
    << "  l1_shared_total_bytes: " << sm.l1_shared_total_bytes << "\n"
    << "  shared_mem_banks: " << sm.shared_mem_banks << "\n"
    << "  shared_mem_bank_bytes: " << sm.shared_mem_bank_bytes << "\n"
    << "  shared_mem_latency_cycles: " << sm.shared_mem_latency_cycles << "\n"
    << "  l1_caches_global_loads: " << (sm.l1_caches_global_loads ? "true" : "false") << "\n"
    << "  l1_hit_latency_cycles: " << sm.l1_hit_latency_cycles << "\n"
    << "  tensor_flops_per_cycle: " << format_double(sm.tensor_flops_per_cycle) << "\n"
    << "  tensor_clock_ghz: " << format_double(sm.tensor_clock_ghz) << "\n"
    << "  fp32_flops_per_cycle: " << format_double(sm.fp32_flops_per_cycle) << "\n"
    << "  exp_per_cycle: " << format_double(sm.exp_per_cycle) << "\n"
    << "  sfu_holds_tensor: " << (sm.sfu_holds_tensor ? "true" : "false") << "\n"
    << "  fp32_holds_tensor: " << (sm.fp32_holds_tensor ? "true" : "false") << "\n"
    << "  max_inflight_bytes_per_sm: " << sm.max_inflight_bytes_per_sm << "\n"
    << "  max_inflight_bytes_per_warp: " << sm.max_inflight_bytes_per_warp << "\n"
    << "  queue_async_copies: " << (sm.queue_async_copies ? "true" : "false") << "\n"
    << "  async_fills_take_banks: " << (sm.async_fills_take_banks ? "true" : "false") << "\n"
    << "  load_bytes_per_cycle: " << format_double(sm.load_bytes_per_cycle) << "\n";
  const std::pair<const char*, const core::MmaFlavourSpec*> flavours[] = {
      {"mma_sync", &sm.mma.mma_sync}, {"wgmma", &sm.mma.wgmma}, {"tcgen05", &sm.mma.tcgen05}};
  bool any = false;
  for (const auto& [key, f] : flavours) {
    if (!f->present) continue;
    if (!any) o << "  mma:\n";
    any = true;
    o << "    " << key << ":\n"
      << "      flops_per_cycle: " << format_double(f->flops_per_cycle) << "\n"
      << "      latency_cycles: " << format_double(f->latency_cycles) << "\n"
      << "      m: " << f->m << "\n      n: " << f->n << "\n      k: " << f->k << "\n"
      << "      issue_warps: " << f->issue_warps << "\n"
      << "      fp8_scale: " << format_double(f->fp8_scale) << "\n"
      << "      tf32_scale: " << format_double(f->tf32_scale) << "\n";
  }
  if (d.kind == core::DeviceKind::kScratchpad || d.scratchpad.sram_bytes_per_core > 0) {
    o << "scratchpad:\n"
      << "  sram_bytes_per_core: " << d.scratchpad.sram_bytes_per_core << "\n"
      << "  dma_engines: " << d.scratchpad.dma_engines << "\n"
      << "  dma_bytes_per_cycle: " << format_double(d.scratchpad.dma_bytes_per_cycle) << "\n"
      << "  dma_latency_cycles: " << d.scratchpad.dma_latency_cycles << "\n";
  }
  return o.str();
}

}  // namespace attnsim::config
