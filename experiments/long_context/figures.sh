#!/usr/bin/env bash
# Figures of experiments/long_context: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
h5="$1"; out="$2"
mkdir -p "$out"
/usr/bin/python3 "$here/plot_long_context.py" "$h5" "$out/long_context.png" ${LONG_CONTEXT_TIMING:+--timing "$LONG_CONTEXT_TIMING"}
echo "$out/long_context.png"
