#!/usr/bin/env bash
# Figures of experiments/tile_shapes: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scripts="$here/../../scripts"
h5="$1"; out="$2"
mkdir -p "$out"
py=/usr/bin/python3
$py "$scripts/plot_occupancy_heatmap.py" "$h5" "$out/occupancy_tiles.png" --x block_n --y block_m \
  --select stages=2 --select warps=4 \
  --title "flash2 on h200 (d = 128): theoretical occupancy over tile shape, 2 stages, 4 warps"
$py "$scripts/plot_occupancy_heatmap.py" "$h5" "$out/occupancy_stages_warps.png" --x warps --y stages \
  --select block_m=128 --select block_n=128 \
  --title "flash2 on h200 (d = 128): occupancy over (stages, warps), 128 x 128 tiles"
$py "$scripts/plot_occupancy_heatmap.py" "$h5" "$out/time_tiles.png" --x block_n --y block_m --metric time \
  --select stages=2 --select warps=4 \
  --title "flash2 on h200 (d = 128): simulated time over tile shape, 2 stages, 4 warps"
$py "$here/best.py" "$h5" | tee "$out/ranking.txt"
$py "$scripts/plot_timeline.py" "$h5" "$out/timeline_best.png" --point "$($py "$here/best.py" "$h5" --index)"
echo "$out/occupancy_tiles.png"
echo "$out/occupancy_stages_warps.png"
echo "$out/time_tiles.png"
echo "$out/timeline_best.png"
