#!/usr/bin/env bash
# The project's test command (README "Quick start"; .ci/run calls it):
# set-up, build, ctest, then the Python checks.
#   scripts/test.sh             Release build in build/
#   scripts/test.sh --sanitize  AddressSanitizer + UBSan build in build-sanitize/
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

extra=()
if [ "${1:-}" = "--sanitize" ]; then
  export ATTNSIM_BUILD_DIR="$root/build-sanitize"
  extra+=(-DATTNSIM_SANITIZE=ON -DATTNSIM_BENCH=OFF)
  export ASAN_OPTIONS=detect_leaks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
build="${ATTNSIM_BUILD_DIR:-$root/build}"

scripts/setup.sh
scripts/build.sh "${extra[@]}"
# Bench binary and any target not part of "all" must build too (warnings are errors in spirit).
(cd "$build" && ctest --output-on-failure -j "$(nproc)" --timeout 600)

PY=/usr/bin/python3
export ATTNSIM="$build/attnsim"
export MPLBACKEND=Agg
shopt -s nullglob
py_tests=(scripts/tests/test_*.py)
passed=0; failed=0
for t in "${py_tests[@]}"; do
  if "$PY" "$t"; then passed=$((passed+1)); echo "PASS $t"; else failed=$((failed+1)); echo "FAIL $t"; fi
done
echo "python checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
