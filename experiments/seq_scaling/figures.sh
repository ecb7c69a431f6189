#!/usr/bin/env bash
# Figures of experiments/seq_scaling: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scripts="$here/../../scripts"
h5="$1"; out="$2"
n=8192; [ -n "${ATTNSIM_QUICK:-}" ] && n=4096  # quick.yaml
mkdir -p "$out"
/usr/bin/python3 "$scripts/plot_scaling.py" "$h5" "$out/scaling.png" \
  --title "Theorem 2: HBM traffic vs N on h100-sxm (batch 1, 2 heads, d = 64, fp16, forward)"
/usr/bin/python3 "$scripts/plot_roofline.py" "$h5" "$out/roofline.png" --device h100-sxm \
  --title "roofline on h100-sxm: standard vs flash1 vs flash2, N = 256 ... $n (L2 on and off)"
echo "$out/scaling.png"
echo "$out/roofline.png"
