#!/usr/bin/env bash
# Figures of experiments/block_size: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scripts="$here/../../scripts"
h5="$1"; out="$2"
batch=64; [ -n "${ATTNSIM_QUICK:-}" ] && batch=2  # quick.yaml
mkdir -p "$out"
/usr/bin/python3 "$scripts/plot_traffic_vs_block.py" "$h5" "$out/traffic_vs_block.png" \
  --title "FlashAttention Fig. 2 middle: GPT-2 medium forward (batch $batch), flash1 on a100-40gb"
echo "$out/traffic_vs_block.png"
