#!/usr/bin/env bash
# The main job (README "Quick start"): set-up, build, then run one experiment end to end.
#   scripts/run.sh                          the default experiment (experiments/block_size)
#   scripts/run.sh experiments/<name> [-j N] [sweep options...]
# Writes results/<name>.h5 and the experiment's figures under results/<name>/, then prints
# a summary table of the sweep.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

experiment="experiments/block_size"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  experiment="${1%/}"
  shift
fi
name="$(basename "$experiment")"
if [ ! -f "$experiment/sweep.yaml" ]; then
  echo "run.sh: $experiment/sweep.yaml not found; experiments:" >&2
  ls -d experiments/*/ >&2
  exit 2
fi

scripts/setup.sh
scripts/build.sh
attnsim="${ATTNSIM_BUILD_DIR:-$root/build}/attnsim"

mkdir -p results
out="results/$name.h5"
echo "== $experiment: attnsim sweep -> $out"
"$attnsim" sweep "$experiment/sweep.yaml" --out "$out" "$@"
/usr/bin/python3 scripts/check_h5.py "$out" >/dev/null

figdir="results/$name"
mkdir -p "$figdir"
if [ -x "$experiment/figures.sh" ]; then
  echo "== figures -> $figdir/"
  MPLBACKEND=Agg ATTNSIM="$attnsim" "$experiment/figures.sh" "$out" "$figdir"
fi
echo "== summary"
/usr/bin/python3 scripts/summarize.py "$out"
