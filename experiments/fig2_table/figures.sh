#!/usr/bin/env bash
# Figures of experiments/fig2_table: figures.sh RESULTS.h5 OUTDIR (called by scripts/run.sh).
# The sweep runs the published batch 64: no scaling.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scripts="$here/../../scripts"
h5="$1"; out="$2"
mkdir -p "$out"
# The published times are for batch 64: the quick variant (batch 2, quick.yaml) shows no references.
refs=(--reference "published standard (arXiv)=40.3" --reference "published standard (NeurIPS)=35.3"
      --reference "published FlashAttention=4.4")
batch=64
if [ -n "${ATTNSIM_QUICK:-}" ]; then refs=(); batch=2; fi
/usr/bin/python3 "$scripts/plot_kernel_breakdown.py" "$h5" "$out/kernel_breakdown.png" "${refs[@]}" \
  --title "FlashAttention Fig. 2 left: GPT-2 medium fwd+bwd (batch $batch) on a100-40gb, per kernel"
/usr/bin/python3 "$here/table.py" "$h5" | tee "$out/table.txt"
echo "$out/kernel_breakdown.png"
