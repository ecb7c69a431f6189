#!/usr/bin/env bash
# CPU seconds and peak RSS of each point of experiments/long_context, one `attnsim run` per kernel
# and N (sampled): [KERNELS="flash2 flash3"] timing.sh [OUT.csv] [N...]; default N = 8192 ...
# 1048576. The sweep's HDF5 file holds no host times (same input, same bytes), so they are
# measured here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
attnsim="${ATTNSIM:-$root/build/attnsim}"
out="${1:-$root/results/long_context/timing.csv}"
shift || true
ns=("$@")
[ ${#ns[@]} -eq 0 ] && ns=(8192 16384 32768 65536 131072 262144 524288 1048576)
mkdir -p "$(dirname "$out")"
echo "kernel,seq,cpu_s,max_rss_kib,time_ns" >"$out"
for kernel in ${KERNELS:-flash2 flash3}; do
  for n in "${ns[@]}"; do
    t="$(mktemp)"
    json="$(/usr/bin/time -f "%U %S %M" -o "$t" "$attnsim" run --device h200 --kernel "$kernel" --set batch=1 --set heads=32 \
      --set seq="$n" --set head_dim=128 --set sim.mode=sampled --json)"
    read -r u s m <"$t"
    rm -f "$t"
    ns_time="$(printf '%s' "$json" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["metrics"]["gpu__time_duration.sum"])')"
    echo "$kernel,$n,$(echo "$u + $s" | bc),$m,$ns_time" | tee -a "$out"
  done
done
