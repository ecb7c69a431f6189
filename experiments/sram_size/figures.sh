#!/usr/bin/env bash
# Figures of experiments/sram_size: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
h5="$1"; out="$2"
mkdir -p "$out"
/usr/bin/python3 "$here/plot_sram_size.py" "$h5" "$out/sram_size.png"
echo "$out/sram_size.png"
