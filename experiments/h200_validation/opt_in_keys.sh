#!/usr/bin/env bash
# Re-measures docs/accuracy.md §6 and §5: the h200 validation sweep (27 kernels of kernels.csv)
# with the opt-in timing keys: sm.queue_async_copies and l2.wait_for_pending_fills off, each alone
# and both on, sm.sfu_holds_tensor with sm.fp32_holds_tensor (`holds`), sm.async_fills_take_banks
# (`banks`) and banks with holds and queue (`package`); prints per setting the
# time median and worst, rho, the DRAM and L2 medians and the FA-2 rows' time errors. With
# --paper, also the FA-3 paper's FA-2 column on h100-sxm (scripts/compare_paper.py --impl fa2) for
# each setting.
#
#   experiments/h200_validation/opt_in_keys.sh [--paper] [-j N]      (needs build/attnsim, or $ATTNSIM)
#
# About 1 min per setting on two cores (7 settings), plus ~1 min each with --paper.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${ATTNSIM:-$root/build/attnsim}"
jobs=2
paper=0
while [ $# -gt 0 ]; do
  case "$1" in
    --paper) paper=1; shift ;;
    -j) [ $# -ge 2 ] || { echo "opt_in_keys.sh: -j needs a value" >&2; exit 2; }; jobs="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "opt_in_keys.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "opt_in_keys.sh: $bin is not an executable (build first, or set ATTNSIM)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
settings=("off:" "queue:device.sm.queue_async_copies=true"
          "fills:device.l2.wait_for_pending_fills=true"
          "both:device.sm.queue_async_copies=true device.l2.wait_for_pending_fills=true"
          "holds:device.sm.sfu_holds_tensor=true device.sm.fp32_holds_tensor=true"
          "banks:device.sm.async_fills_take_banks=true"
          "package:device.sm.queue_async_copies=true device.sm.sfu_holds_tensor=true device.sm.fp32_holds_tensor=true device.sm.async_fills_take_banks=true")
for s in "${settings[@]}"; do
  name="${s%%:*}"
  keys="${s#*:}"
  yaml="$tmp/$name.yaml"
  # The sweep file with the keys added under its `set:`.
  awk -v keys="$keys" '{ print } /^set:$/ { n = split(keys, k, " "); for (i = 1; i <= n; ++i) {
    split(k[i], kv, "="); print "  " kv[1] ": " kv[2] } }' "$root/experiments/h200_validation/sweep.yaml" > "$yaml"
  "$bin" sweep "$yaml" --out "$tmp/$name.h5" -j "$jobs" > /dev/null 2> "$tmp/$name.log" ||
    { cat "$tmp/$name.log" >&2; exit 1; }
  "$bin" compare --measured "$root/tests/data/reference/kernels.csv" --simulated "$tmp/$name.h5" --device h200 --json \
    > "$tmp/$name.json"
  echo "== ${name} (${keys:-both keys off})"
  "$py" - "$tmp/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
summary = {m["metric"]: m for m in d["summary"]}
def line(metric, label):
    m = summary[metric]
    print(f"  {label}: median {100 * m['median_rel_error']:.1f} %, worst {100 * m['worst_rel_error']:.1f} %")
line("gpu__time_duration.sum", "time")
line("dram__bytes.sum", "DRAM r+w")
line("lts__t_bytes.sum", "L2 bytes")
print(f"  Spearman rho of times: {d['time_rank_correlation']:.3f}")
rows = [r for r in d["rows"] if r["metric"] == "gpu__time_duration.sum" and "flash_fwd_kernel" in r["measured_kernel"]]
print("  FA-2 rows, time error: " + ", ".join(
    f"{r['label'].replace('/sdpa_flash', '')} {100 * r['rel_error']:+.1f} %" for r in rows))
PY
  if [ "$paper" = 1 ]; then
    sets=()
    for k in $keys; do sets+=(--set "$k"); done
    ATTNSIM="$bin" "$py" "$root/scripts/compare_paper.py" --impl fa2 -j "$jobs" "${sets[@]}" \
      | grep -E "median|worst|Spearman|plateau" | sed 's/^/  paper FA-2: /'
  fi
done
