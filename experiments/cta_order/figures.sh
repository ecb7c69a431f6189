#!/usr/bin/env bash
# Figures of experiments/cta_order: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scripts="$here/../../scripts"
h5="$1"; out="$2"
n=8192; [ -n "${ATTNSIM_QUICK:-}" ] && n=4096  # quick.yaml
mkdir -p "$out"
/usr/bin/python3 "$here/plot_cta_order.py" "$h5" "$out/cta_order.png"
/usr/bin/python3 "$scripts/plot_timeline.py" "$h5" "$out/timeline_head_major_32.png" --point 5 \
  --title "flash2, h200, 32 heads, N = $n, head-major CTA order"
/usr/bin/python3 "$scripts/plot_timeline.py" "$h5" "$out/timeline_row_major_32.png" --point 4 \
  --title "flash2, h200, 32 heads, N = $n, row-major CTA order"
echo "$out/cta_order.png"
