#!/usr/bin/env bash
# Figures of experiments/split_kv: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
h5="$1"; out="$2"
mkdir -p "$out"
/usr/bin/python3 "$here/plot_split_kv.py" "$h5" "$out/split_kv.png"
echo "$out/split_kv.png"
