#!/usr/bin/env bash
# SASS instructions per value of the softmax analogs (softmax_analogs.cu): compiles them for sm_90
# with nvcc (no GPU needed) and reads each kernel's .text size from the cubin (16 bytes per sm_90
# instruction); the difference between two unrolled sizes of a kernel, divided by the extra values
# per thread, is the code one more value costs. Then dynamic.py: the instructions a warp executes
# (without the division's slow path and the warp-0 stage of block reductions), per value and per
# row and thread, the counts kernels/standard.cpp uses; then chain.py: one warp's load round trips
# and dependent-chain cycles from the instructions' control codes (RowKernelShape's tables); then
# pipes.py: each kernel's instructions per value by pipe (ALU, FMA, MUFU) against the issue slots.
# Usage: count.sh [nvcc]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
nvcc="${1:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -arch=sm_90 -O3 -cubin -Xptxas -v -o "$tmp/a.cubin" "$here/softmax_analogs.cu" 2>"$tmp/ptxas.txt"
declare -A n
while read -r name size; do n[$name]=$((16#$size / 16)); done < <(
  readelf -S -W "$tmp/a.cubin" 2>/dev/null | sed -n 's/.* \.text\.\([^ ]*\) *PROGBITS *[0-9a-f]* [0-9a-f]* \([0-9a-f]*\) .*/\1 \2/p')
per() {  # kernel-name-prefix small large values-difference
  local a="" b=""
  for k in "${!n[@]}"; do
    case "$k" in *"$1"ILi"$2"E*) a=${n[$k]} ;; *"$1"ILi"$3"E*) b=${n[$k]} ;; esac
  done
  echo "$1: $a instructions at $2 values per thread, $b at $3: $(( (b - a) / ($3 - $2) )) per value"
}
per row_softmax_warp 32 64
per row_softmax_reg 4 8
per row_softmax_smem 16 32
per row_softmax_block 16 32
grep -E "registers" "$tmp/ptxas.txt" | sed 's/^/  ptxas: /'
echo "executed by a warp of a full row:"
/usr/bin/python3 "$here/dynamic.py" "$tmp/a.cubin" | sed 's/^/  /'
echo "one warp alone, from the control codes (chain.py):"
/usr/bin/python3 "$here/chain.py" "$tmp/a.cubin" --sketch | sed 's/^/  /'
echo "per value by pipe (pipes.py):"
/usr/bin/python3 "$here/pipes.py" "$tmp/a.cubin" | sed 's/^/  /'
