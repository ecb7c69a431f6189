#!/usr/bin/env bash
# The main job (README "Quick start"): set-up, build, then run one experiment end to end.
#   scripts/run.sh                          the default experiment (experiments/block_size)
#   scripts/run.sh experiments/<name> [--quick] [-j N] [sweep options...]
# Writes results/<name>.h5 and the experiment's figures under results/<name>/, then prints
# a summary table of the sweep. --quick runs the experiment's quick.yaml instead (a smaller
# workload that keeps the figure's point, seconds instead of minutes) into results/<name>-quick.h5
# and results/<name>-quick/; the figure scripts see ATTNSIM_QUICK=1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

experiment="experiments/block_size"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  experiment="${1%/}"
  shift
fi
name="$(basename "$experiment")"
sweep="$experiment/sweep.yaml"
quick=""
if [ "${1:-}" = "--quick" ]; then
  shift
  quick=1
  sweep="$experiment/quick.yaml"
  name="$name-quick"
fi
if [ ! -f "$sweep" ]; then
  echo "run.sh: $sweep not found; experiments:" >&2
  ls -d experiments/*/ >&2
  exit 2
fi

scripts/setup.sh
scripts/build.sh
attnsim="${ATTNSIM_BUILD_DIR:-$root/build}/attnsim"

mkdir -p results
out="results/$name.h5"
echo "== $sweep: attnsim sweep -> $out"
"$attnsim" sweep "$sweep" --out "$out" "$@"
/usr/bin/python3 scripts/check_h5.py "$out" >/dev/null

figdir="results/$name"
mkdir -p "$figdir"
if [ -x "$experiment/figures.sh" ]; then
  echo "== figures -> $figdir/"
  MPLBACKEND=Agg ATTNSIM="$attnsim" ATTNSIM_QUICK="$quick" "$experiment/figures.sh" "$out" "$figdir"
fi
echo "== summary"
/usr/bin/python3 scripts/summarize.py "$out"
