#!/usr/bin/env bash
# Configures and builds attnsim into build/ (or $ATTNSIM_BUILD_DIR). Used by run.sh and test.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTNSIM_BUILD_DIR:-$root/build}"
jobs="${ATTNSIM_BUILD_JOBS:-$(nproc)}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$jobs" 2>&1 | grep -E 'error|warning|Error' || true
test -x "$build/attnsim" || { echo "build.sh: build failed" >&2; cmake --build "$build" -j 1 2>&1 | tail -40; exit 1; }
