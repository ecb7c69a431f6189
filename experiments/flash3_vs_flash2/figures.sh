#!/usr/bin/env bash
# Figures of experiments/flash3_vs_flash2: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
h5="$1"; out="$2"
mkdir -p "$out"
/usr/bin/python3 "$here/plot_flash3_vs_flash2.py" "$h5" "$out/flash3_vs_flash2.png"
echo "$out/flash3_vs_flash2.png"
