#!/usr/bin/env bash
# Figures of experiments/triton_tiles: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh):
# triton_tiles.png (plot_triton_tiles.py) and ranking.txt (every point ranked by time, by
# experiments/tile_shapes/best.py, which reads any flash2 tile sweep).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
h5="$1"; out="$2"
mkdir -p "$out"
/usr/bin/python3 "$here/plot_triton_tiles.py" "$h5" "$out/triton_tiles.png"
/usr/bin/python3 "$here/../tile_shapes/best.py" "$h5" > "$out/ranking.txt"
echo "$out/triton_tiles.png"
echo "$out/ranking.txt"
