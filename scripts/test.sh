#!/usr/bin/env bash
# The project's test command (README "Quick start"; .ci/run calls it):
# set-up, build, ctest, then the Python tests (pytest).
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
  export ATTNSIM_PYTHON=off  # the module is not built with the sanitizers (CMakeLists.txt)
fi
build="${ATTNSIM_BUILD_DIR:-$root/build}"

scripts/setup.sh
scripts/build.sh "${extra[@]}"
# Bench binary and any target not part of "all" must build too (warnings are errors in spirit).
(cd "$build" && ctest --output-on-failure -j "$(nproc)" --timeout 600)

# The Python tests (scripts/tests/, pytest; fixtures in scripts/tests/conftest.py), the Python
# module's among them (build/python; not built with --sanitize).
export ATTNSIM="$build/attnsim"
export ATTNSIM_PYTHONPATH="$build/python"
export MPLBACKEND=Agg
/usr/bin/python3 -m pytest scripts/tests -p no:cacheprovider -rfEs
