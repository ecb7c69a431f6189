#!/usr/bin/env bash
# Figures of experiments/tile_shapes: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
# figures.py draws occupancy_tiles.png, occupancy_stages_warps.png, time_tiles.png (the occupancy
# heatmap script), ranking.txt (best.py) and timeline_best.png (the fastest point) in one process.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
/usr/bin/python3 "$here/figures.py" "$1" "$2"
