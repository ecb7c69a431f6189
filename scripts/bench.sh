#!/bin/bash
# Runs the end-to-end Google Benchmark targets (attnsim_bench), one process each so that peak RSS
# (/usr/bin/time -v) belongs to one workload, and prints one table: wall time, simulated events/s,
# simulated DRAM bytes/s, peak RSS and the slowdown against the measured H200 kernel time
# (tests/data/reference/kernels.csv, microbench.json). Usage: scripts/bench.sh [build-dir] [reps]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
reps="${2:-3}"
bench="$build/attnsim_bench"
[ -x "$bench" ] || { echo "bench.sh: $bench not found (cmake --build $build --target attnsim_bench)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# name | benchmark filter | measured H200 time in ns (sum of the workload's kernels) | source
cases=(
  "stream_read 4 GiB, 264 CTAs x 16 KiB|^BM_StreamRead4GiB264Ctas/16384/0/|1244544|microbench.json stream_read 264 x 16384 B: 1.2445 ms"
  "flash2 fwd B1 H32 N8192 d128 128x64|^BM_Flash2FwdH32N8192/|3064480|kernels.csv B1H32N8192d128/sdpa_flash"
  "standard fwd B1 H32 N8192 d128|^BM_StandardFwdH32N8192/|10491808|kernels.csv B1H32N8192d128/std (3 kernels)"
  "flash2 fwd B1 H1 N131072 d128|^BM_Flash2FwdH1N131072/||no measurement"
  "block model 2048: stream_read 4 GiB|^BM_StreamRead4GiB264Ctas/16384/2048/|1244544|as above"
  "block model 2048: flash2 fwd H32 N8192|^BM_Flash2FwdH32N8192Block2048/|3064480|as above"
  "block model 2048: standard fwd H32 N8192|^BM_StandardFwdH32N8192Block2048/|10491808|as above"
  "block model 2048: flash2 fwd H1 N131072|^BM_Flash2FwdH1N131072Block2048/||no measurement"
  "sampled: flash2 fwd H32 N8192|^BM_SampledFlash2FwdH32N8192/|3064480|as above"
  "sampled: standard fwd H32 N8192|^BM_SampledStandardFwdH32N8192/|10491808|as above"
  "sampled: flash2 fwd H32 N1048576|^BM_SampledFlash2FwdH32N1048576/||no measurement"
)
i=0
for c in "${cases[@]}"; do
  IFS='|' read -r name filter real_ns source <<<"$c"
  for ((r = 0; r < reps; ++r)); do
    /usr/bin/time -f "%M" -o "$tmp/rss.$i.$r" "$bench" --benchmark_filter="$filter" --benchmark_repetitions=1 \
      --benchmark_format=json --benchmark_out="$tmp/out.$i.$r.json" --benchmark_out_format=json >/dev/null
  done
  printf '%s|%s|%s\n' "$name" "$real_ns" "$source" >"$tmp/case.$i"
  i=$((i + 1))
done

/usr/bin/python3 - "$tmp" "$i" "$reps" <<'PY'
import json, statistics, sys, os
tmp, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print(f"| workload | wall s (median of {reps}) | CPU s | events/s | simulated DRAM B/s | peak RSS MiB | H200 time | slowdown |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for i in range(n):
    name, real_ns, source = open(f"{tmp}/case.{i}").read().strip().split("|")
    walls, cpus, ev, by, rss = [], [], [], [], []
    for r in range(reps):
        d = json.load(open(f"{tmp}/out.{i}.{r}.json"))
        b = [x for x in d["benchmarks"] if x.get("run_type", "iteration") == "iteration"][0]
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
        walls.append(b["real_time"] * scale)
        cpus.append(b["cpu_time"] * scale)
        ev.append(b.get("events_per_s", 0))
        by.append(b.get("sim_bytes_per_s", 0))
        rss.append(int(open(f"{tmp}/rss.{i}.{r}").read().split()[-1]) / 1024)
    wall = statistics.median(walls)
    real = f"{int(real_ns) / 1e6:.3f} ms" if real_ns else "n/a"
    slow = f"{wall / (int(real_ns) * 1e-9):,.0f}x" if real_ns else "n/a"
    print(f"| {name} | {wall:.2f} | {statistics.median(cpus):.2f} | {statistics.median(ev) / 1e6:.2f} M | "
          f"{statistics.median(by) / 1e9:.2f} G | {max(rss):.0f} | {real} | {slow} |")
print("\nH200 times: " + "; ".join(open(f"{tmp}/case.{i}").read().strip().split("|")[0] + ": " +
                                  open(f"{tmp}/case.{i}").read().strip().split("|")[2] for i in range(n)))
PY
