#!/usr/bin/env bash
# Figures of experiments/paged_decode: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
h5="$1"; out="$2"
mkdir -p "$out"
/usr/bin/python3 "$here/plot_paged_decode.py" "$h5" "$out/paged_decode.png"
echo "$out/paged_decode.png"
