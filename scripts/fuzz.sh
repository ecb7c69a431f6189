#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang++ with ASan+UBSan) in build-fuzz/ and runs each for
# N seconds on a scratch copy of its committed seed corpus (fuzz/corpus/<target>/).
#   scripts/fuzz.sh                    every target, 600 s each
#   scripts/fuzz.sh fuzz_sweep 60      one target, 60 s
# Prints per target: seconds, executions (libFuzzer's "stat::number_of_executed_units"), findings.
# Crashers are left in build-fuzz/findings/<target>/; copy each into
# tests/data/fuzz-regressions/<target>/ (tests/config/fuzz_regression_test.cpp replays them).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
targets=(fuzz_device_yaml fuzz_workload_yaml fuzz_sweep fuzz_set_overrides fuzz_ncu_csv)
if [ -n "${1:-}" ] && [ "${1:-}" != all ]; then targets=("$1"); fi
seconds="${2:-600}"
build="${ATTNSIM_FUZZ_BUILD_DIR:-$root/build-fuzz}"

# Set-up: clang and libFuzzer's runtime from Debian (not part of scripts/setup.sh).
scripts/setup.sh
packages=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" != 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNSIM_FUZZ=ON \
  -DATTNSIM_BENCH=OFF -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build "$build" -j "${ATTNSIM_BUILD_JOBS:-$(nproc)}" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for t in "${targets[@]}"; do
  work="$build/corpus/$t"; findings="$build/findings/$t"; log="$build/logs/$t.log"
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  cp -n fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
  dict=(); [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  start=$(date +%s)
  marker="$findings/.run-start"; : > "$marker"   # findings of earlier runs are not this run's
  set +e
  "$build/fuzz/$t" "$work" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1
  rc=$?
  set -e
  elapsed=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  found=$(find "$findings" -type f -name 'crash-*' -newer "$marker" -o -type f -name 'leak-*' -newer "$marker" \
          -o -type f -name 'timeout-*' -newer "$marker" -o -type f -name 'oom-*' -newer "$marker" | wc -l)
  echo "$t: ${elapsed} s, ${execs:-?} executions, ${found} findings (libFuzzer exit $rc, log $log)"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then status=1; fi
done
exit $status
