// Google Benchmark targets for the engine's hot paths (built as attnsim_bench, not in ctest):
// event queue push/pop, L2 lookup/fill, HBM channel scheduling, and stream_read of 4 GiB over
// 264 CTAs on the h200 preset end to end (events/s and simulated bytes/s as counters).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "kernels/factories.h"
#include "sim/config/device_loader.h"
#include "sim/core/run_result.h"
#include "sim/engine/engine.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/hbm.h"
#include "sim/engine/l2_cache.h"

namespace attnsim::engine {
namespace {

void BM_EventQueuePushPop(benchmark::State& state) {
  EventQueue q;
  const std::size_t depth = static_cast<std::size_t>(state.range(0));
  q.reserve(depth + 1);
  std::uint64_t x = 12345;
  for (std::size_t i = 0; i < depth; ++i) q.push(static_cast<double>(i), EventKind::kResume, 0);
  for (auto _ : state) {
    const Event e = q.pop();
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    q.push(e.time + static_cast<double>(x >> 54), EventKind::kResume, e.slot);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueuePushPop)->Arg(64)->Arg(4096);

void BM_L2LookupFill(benchmark::State& state) {
  const core::DeviceSpec d = config::load_device("h200");
  L2Cache l2(d.l2);
  const std::uint64_t lines = static_cast<std::uint64_t>(state.range(0)) / 128;
  std::uint64_t i = 0;
  for (auto _ : state) {
    const L2Outcome o = l2.access(i % lines, 0xf, false, static_cast<std::uint32_t>(i & 1), 0);
    benchmark::DoNotOptimize(o);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_L2LookupFill)->Arg(8 << 20)->Arg(256 << 20);

void BM_HbmChannelScheduling(benchmark::State& state) {
  const core::DeviceSpec d = config::load_device("h200");
  Hbm hbm(d.hbm, d.clock_ghz);
  core::Bytes addr = 0;
  double t = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(hbm.read(t, addr, 128));
    addr += 128;
    t += 0.05;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HbmChannelScheduling);

// Arg 1: l2.tracking_bytes (0 = the line model; 2048 = the block model).
void BM_StreamRead4GiB264Ctas(benchmark::State& state) {
  const core::DeviceSpec d =
      config::load_device("h200", {{"l2.tracking_bytes", std::to_string(state.range(1))}});
  core::Workload w;
  w.kernel = "stream_read";
  w.programs = 264;
  w.bytes_per_step = static_cast<core::Bytes>(state.range(0));
  w.total_bytes = core::Bytes{4} << 30;
  double events = 0, bytes = 0;
  for (auto _ : state) {
    const auto program = kernels::make_stream_read(w, d);
    const auto r = simulate(d, program);
    events += static_cast<double>(r[0].totals.stats.events);
    bytes += static_cast<double>(r[0].totals.dram_read);
  }
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
  state.counters["sim_bytes_per_s"] = benchmark::Counter(bytes, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_StreamRead4GiB264Ctas)
    ->Args({16384, 0})
    ->Args({1024, 0})
    ->Args({16384, 2048})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace attnsim::engine
BENCHMARK_MAIN();
