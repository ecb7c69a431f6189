#!/usr/bin/env bash
# Figures of experiments/block_size: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scripts="$here/../../scripts"
h5="$1"; out="$2"
mkdir -p "$out"
/usr/bin/python3 "$scripts/plot_traffic_vs_block.py" "$h5" "$out/traffic_vs_block.png" \
  --title "FlashAttention Fig. 2 middle: GPT-2 medium forward (batch 64), flash1 on a100-40gb"
echo "$out/traffic_vs_block.png"
