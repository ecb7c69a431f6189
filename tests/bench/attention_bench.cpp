// End-to-end Google Benchmark targets of the attention kernels on the h200 preset (flash2 and
// standard forward, B=1 H=32 N=8192 d=128; flash2 at N=131072, H=1) and the cost of emitting the
// tile-op stream alone (no engine); side by side: sim.mode sampled against full (also causal
// flash2 and flash3, B4 H32 N4096), flash3 against flash2. Counters: simulated events/s, simulated DRAM bytes/s, the simulated kernel time and the
// process's peak RSS so far.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/factories.h"
#include "sim/config/device_loader.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"

namespace attnsim::engine {
namespace {

core::Workload attention(const char* kernel, std::uint64_t heads, std::uint64_t seq) {
  core::Workload w;
  w.kernel = kernel;
  w.batch = 1;
  w.heads = heads;
  w.kv_heads = heads;
  w.seq_q = seq;
  w.seq_kv = seq;
  w.head_dim = 128;
  if (w.kernel == "flash2") {
    w.block_m = 128;
    w.block_n = 64;
  }
  return w;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// `tracking`: l2.tracking_bytes ("0" = the line model, the default; "2048" = the block model).
void run_end_to_end(benchmark::State& state, const core::Workload& w, const char* tracking = "0",
                    bool sampled = false) {
  const core::DeviceSpec d = config::load_device("h200", {{"l2.tracking_bytes", tracking}});
  double events = 0, bytes = 0, kernel_ns = 0;
  EngineOptions options;
  options.sampled = sampled;
  for (auto _ : state) {
    const core::TileProgram program = w.kernel == "flash2" ? kernels::make_flash2(w, d) : kernels::make_standard(w, d);
    const auto results = simulate(d, program, options);
    kernel_ns = 0;
    for (const auto& r : results) {
      events += static_cast<double>(r.totals.stats.events);
      bytes += static_cast<double>(r.totals.dram_read + r.totals.dram_write);
      kernel_ns += r.totals.time_ns;
    }
  }
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
  state.counters["sim_bytes_per_s"] = benchmark::Counter(bytes, benchmark::Counter::kIsRate);
  state.counters["sim_kernel_ns"] = kernel_ns;
  state.counters["peak_rss_mib"] = peak_rss_mib();
}

void BM_Flash2FwdH32N8192(benchmark::State& state) { run_end_to_end(state, attention("flash2", 32, 8192)); }
BENCHMARK(BM_Flash2FwdH32N8192)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_StandardFwdH32N8192(benchmark::State& state) { run_end_to_end(state, attention("standard", 32, 8192)); }
BENCHMARK(BM_StandardFwdH32N8192)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_Flash2FwdH1N131072(benchmark::State& state) { run_end_to_end(state, attention("flash2", 1, 131072)); }
BENCHMARK(BM_Flash2FwdH1N131072)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// The same three workloads with the block model (l2.tracking_bytes 2048, docs/performance.md).
void BM_Flash2FwdH32N8192Block2048(benchmark::State& state) {
  run_end_to_end(state, attention("flash2", 32, 8192), "2048");
}
BENCHMARK(BM_Flash2FwdH32N8192Block2048)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_StandardFwdH32N8192Block2048(benchmark::State& state) {
  run_end_to_end(state, attention("standard", 32, 8192), "2048");
}
BENCHMARK(BM_StandardFwdH32N8192Block2048)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_Flash2FwdH1N131072Block2048(benchmark::State& state) {
  run_end_to_end(state, attention("flash2", 1, 131072), "2048");
}
BENCHMARK(BM_Flash2FwdH1N131072Block2048)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// sim.mode: sampled (docs/sampling.md), alone.
void BM_SampledFlash2FwdH32N8192(benchmark::State& state) {
  run_end_to_end(state, attention("flash2", 32, 8192), "0", true);
}
BENCHMARK(BM_SampledFlash2FwdH32N8192)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_SampledStandardFwdH32N8192(benchmark::State& state) {
  run_end_to_end(state, attention("standard", 32, 8192), "0", true);
}
BENCHMARK(BM_SampledStandardFwdH32N8192)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_SampledFlash2FwdH32N1048576(benchmark::State& state) {
  run_end_to_end(state, attention("flash2", 32, 1048576), "0", true);
}
BENCHMARK(BM_SampledFlash2FwdH32N1048576)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// One workload in full and sampled in the same run: CPU seconds of each, the speed-up and the
// sampled result's relative errors of the run (time, DRAM bytes, L2 bytes) in percent.
void sampled_vs_full(benchmark::State& state, const core::Workload& w,
                     core::TileProgram (*make)(const core::Workload&, const core::DeviceSpec&)) {
  const core::DeviceSpec d = config::load_device("h200");
  double cpu_full = 0, cpu_sampled = 0;
  std::vector<core::KernelResult> full, sampled;
  for (auto _ : state) {
    const core::TileProgram program = make(w, d);
    EngineOptions o;
    double t0 = cpu_seconds();
    full = simulate(d, program, o);
    cpu_full = cpu_seconds() - t0;
    o.sampled = true;
    t0 = cpu_seconds();
    sampled = simulate(d, program, o);
    cpu_sampled = cpu_seconds() - t0;
  }
  auto err = [](double a, double b) { return b != 0 ? 100.0 * (a - b) / b : 0.0; };
  const core::LaunchTotals& f = full.at(0).totals;
  const core::LaunchTotals& s = sampled.at(0).totals;
  state.counters["full_cpu_s"] = cpu_full;
  state.counters["sampled_cpu_s"] = cpu_sampled;
  state.counters["speedup"] = cpu_sampled > 0 ? cpu_full / cpu_sampled : 0;
  state.counters["time_err_pct"] = err(s.time_ns, f.time_ns);
  state.counters["dram_err_pct"] = err(static_cast<double>(s.dram_read + s.dram_write), static_cast<double>(f.dram_read + f.dram_write));
  state.counters["lts_err_pct"] = err(static_cast<double>(s.memory.lts_bytes), static_cast<double>(f.memory.lts_bytes));
  state.counters["sampled_fraction"] = s.sampled_fraction;
}

// flash2 B1 H32 N8192 d128.
void BM_SampledVsFullFlash2FwdH32N8192(benchmark::State& state) {
  sampled_vs_full(state, attention("flash2", 32, 8192), kernels::make_flash2);
}
BENCHMARK(BM_SampledVsFullFlash2FwdH32N8192)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// Causal B4 H32 N4096 d128: CTAs skipped whole by class (docs/sampling.md, "classes of CTAs").
core::Workload causal(const char* kernel) {
  core::Workload w = attention(kernel, 32, 4096);
  w.batch = 4;
  w.causal = true;
  return w;
}
void BM_SampledVsFullCausalFlash2FwdB4H32N4096(benchmark::State& state) {
  sampled_vs_full(state, causal("flash2"), kernels::make_flash2);
}
BENCHMARK(BM_SampledVsFullCausalFlash2FwdB4H32N4096)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_SampledVsFullCausalFlash3FwdB4H32N4096(benchmark::State& state) {
  sampled_vs_full(state, causal("flash3"), kernels::make_flash3);
}
BENCHMARK(BM_SampledVsFullCausalFlash3FwdB4H32N4096)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// flash3 against flash2, B1 H32 N8192 d128 h200, full mode, in the same process: three
// alternating runs of each, the median CPU seconds of each and flash3's over flash2's (issue
// target: simulating flash3 takes no longer than flash2 of the same shape, ratio <= 1).
void BM_Flash3VsFlash2FwdH32N8192(benchmark::State& state) {
  const core::DeviceSpec d = config::load_device("h200");
  const core::Workload w2 = attention("flash2", 32, 8192), w3 = attention("flash3", 32, 8192);
  std::vector<double> cpu2, cpu3;
  for (auto _ : state) {
    for (int round = 0; round < 3; ++round) {
      double t0 = cpu_seconds();
      benchmark::DoNotOptimize(simulate(d, kernels::make_flash2(w2, d)));
      cpu2.push_back(cpu_seconds() - t0);
      t0 = cpu_seconds();
      benchmark::DoNotOptimize(simulate(d, kernels::make_flash3(w3, d)));
      cpu3.push_back(cpu_seconds() - t0);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double m2 = median(cpu2), m3 = median(cpu3);
  state.counters["flash2_cpu_s"] = m2;
  state.counters["flash3_cpu_s"] = m3;
  state.counters["flash3_over_flash2"] = m2 > 0 ? m3 / m2 : 0;
}
BENCHMARK(BM_Flash3VsFlash2FwdH32N8192)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// Micro: one CTA's tile program through the engine (flash2, one 128-row query block against
// 8192 keys: 128 K/V steps on one SM of h200).
void BM_OneCtaFlash2TileProgram(benchmark::State& state) {
  core::Workload w = attention("flash2", 1, 8192);
  w.seq_q = 128;
  const core::DeviceSpec d = config::load_device("h200");
  double events = 0;
  for (auto _ : state) {
    const auto results = simulate(d, kernels::make_flash2(w, d));
    events += static_cast<double>(results[0].totals.stats.events);
  }
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_OneCtaFlash2TileProgram)->Unit(benchmark::kMillisecond);

// Emitting every CTA's tile ops without the engine: the kernels' share of an end-to-end run.
void BM_Flash2EmitOnlyH32N8192(benchmark::State& state) {
  const core::DeviceSpec d = config::load_device("h200");
  const core::Workload w = attention("flash2", 32, 8192);
  std::uint64_t ops = 0;
  for (auto _ : state) {
    const core::TileProgram program = kernels::make_flash2(w, d);
    std::vector<core::TileOp> out;
    for (const auto& launch : program.launches) {
      const std::uint64_t ctas = launch->shape().num_ctas();
      for (std::uint64_t c = 0; c < ctas; ++c)
        for (std::uint64_t s = 0;; ++s) {
          out.clear();
          if (!launch->emit_step(c, s, out)) break;
          ops += out.size();
        }
    }
  }
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Flash2EmitOnlyH32N8192)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace attnsim::engine
