#!/bin/bash
# Checks that two attnsim binaries simulate the same results: runs `attnsim run ... --json` with
# each on a list of workloads and compares the "kernels" array (metrics, per-tensor bytes, time
# series; the provenance fields are left out). How an engine change that claims to be exact
# (a faster data structure, inlining) is checked against the engine before it (docs/performance.md).
#
# Usage: scripts/same_results.sh [-f LIST] OLD_BINARY NEW_BINARY
#   LIST: one workload per line, as `attnsim run` arguments (# starts a comment); default: the
#   17 workloads below (line and block L2 model; h200, a100, teaching, scratchpad; stream,
#   flash1/2, standard, decode, pointer chase), a few seconds per binary.
# Prints "same"/"DIFF" per workload; exit 0 when all are the same, 1 when any differs or a run
# fails, 2 on bad usage. Metrics that only NEW reports (a counter added) do not count as a
# difference: they are listed after "same" as "+N new metrics: ..."; every metric OLD reports
# must be in NEW with the same value, and tensors and series must be identical.
set -uo pipefail

list=""
if [ "${1:-}" = "-f" ]; then
  list="${2:-}"
  shift 2 || true
fi
if [ $# -ne 2 ] || { [ -n "$list" ] && [ ! -r "$list" ]; }; then
  echo "usage: scripts/same_results.sh [-f LIST] OLD_BINARY NEW_BINARY" >&2
  exit 2
fi
old="$1"
new="$2"
for b in "$old" "$new"; do
  [ -x "$b" ] || { echo "same_results.sh: $b is not an executable" >&2; exit 2; }
done

default_list() {
  cat <<'EOF'
--device h200 --kernel stream_read --set programs=1 --set bytes_per_step=4096 --set total_bytes=1048576
--device h200 --kernel stream_read --set programs=33 --set total_bytes=67108864
--device h200 --kernel stream_read --set programs=264 --set bytes_per_step=16384 --set total_bytes=268435456
--device h200 --kernel stream_read --set programs=1056 --set total_bytes=268435456
--device h200 --kernel stream_read --set programs=264 --set bytes_per_step=16384 --set total_bytes=268435456 --set device.l2.tracking_bytes=2048
--device h200 --kernel stream_read --set programs=33 --set total_bytes=67108864 --set device.l2.tracking_bytes=2048
--device h200 --kernel stream_read --set programs=1056 --set total_bytes=268435456 --set device.l2.tracking_bytes=2048
--device h200 --kernel flash2 --set batch=1 --set heads=8 --set seq_q=2048 --set seq_kv=2048 --set head_dim=128
--device h200 --kernel flash2 --set batch=1 --set heads=8 --set seq_q=2048 --set seq_kv=2048 --set head_dim=128 --set device.l2.tracking_bytes=2048
--device h200 --kernel flash1 --set batch=1 --set heads=4 --set seq_q=1024 --set seq_kv=1024 --set head_dim=64
--device h200 --kernel standard --set batch=1 --set heads=4 --set seq_q=1024 --set seq_kv=1024 --set head_dim=128
--device h200 --kernel flash_decode --set batch=4 --set heads=8 --set seq_q=1 --set seq_kv=16384 --set head_dim=128
--device a100-40gb --kernel flash2 --set batch=2 --set heads=4 --set seq_q=1024 --set seq_kv=1024 --set head_dim=64 --set pass=fwdbwd
--device a100-40gb --kernel standard --set batch=1 --set heads=4 --set seq_q=512 --set seq_kv=512 --set head_dim=64 --set pass=fwdbwd --set device.l2.tracking_bytes=1024
--device teaching --kernel flash2 --set batch=1 --set heads=2 --set seq_q=256 --set seq_kv=256 --set head_dim=64
--device scratchpad-accel --kernel flash2 --set batch=1 --set heads=2 --set seq_q=512 --set seq_kv=512 --set head_dim=64
--device h200 --kernel pointer_chase --set working_set_bytes=67108864 --set loads=20000
EOF
}

# The run's "kernels" array, keys sorted, or "FAILED rc=N: first line of stderr".
kernels_of() {
  local bin="$1"
  shift
  local out err rc
  err="$(mktemp)"
  out="$("$bin" run "$@" --json 2>"$err")"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAILED rc=$rc: $(head -n 1 "$err")"
    rm -f "$err"
    return
  fi
  rm -f "$err"
  printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["kernels"], sort_keys=True))'
}

# "same", "same +N new metrics: a, b" or "DIFF" for two kernels arrays (JSON text): NEW may add
# metrics to a kernel; everything else must be equal.
compare_kernels() {
  local fa fb
  fa="$(mktemp)"
  fb="$(mktemp)"
  printf '%s' "$1" >"$fa"
  printf '%s' "$2" >"$fb"
  /usr/bin/python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
added = set()
if len(a) == len(b):
    for ka, kb in zip(a, b):
        ma, mb = ka.get("metrics", {}), kb.get("metrics", {})
        added |= set(mb) - set(ma)
        kb["metrics"] = {k: v for k, v in mb.items() if k in ma}
print(("same" + (f" +{len(added)} new metrics: " + ", ".join(sorted(added)) if added else "")) if a == b else "DIFF")
' "$fa" "$fb"
  rm -f "$fa" "$fb"
}

same=0
differ=0
while IFS= read -r line; do
  line="${line%%#*}"
  [ -z "${line// /}" ] && continue
  read -r -a args <<<"$line"
  a="$(kernels_of "$old" "${args[@]}")"
  b="$(kernels_of "$new" "${args[@]}")"
  verdict="DIFF"
  if [ "${a#FAILED}" = "$a" ] && [ "${b#FAILED}" = "$b" ]; then
    verdict="$(compare_kernels "$a" "$b")"
  fi
  if [ "${verdict#same}" != "$verdict" ]; then
    echo "same  $line"
    [ "$verdict" != "same" ] && echo "      ${verdict#same }"
    same=$((same + 1))
  else
    echo "DIFF  $line"
    [ "${a#FAILED}" != "$a" ] && echo "      $old: $a"
    [ "${b#FAILED}" != "$b" ] && echo "      $new: $b"
    differ=$((differ + 1))
  fi
done < <(if [ -n "$list" ]; then cat "$list"; else default_list; fi)

echo "$same same, $differ different"
[ $differ -eq 0 ] && [ $same -gt 0 ]
