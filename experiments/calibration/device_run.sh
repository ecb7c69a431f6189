#!/usr/bin/env bash
# One prepared run of the calibration microbenchmarks on a GPU machine (experiments/calibration/
# README.md): GPU and clock state, the full default microbenchmark set (device attributes, pointer
# chase at the reference's 8 working sets, stream read at its 33 points over 4 GiB, copy), then the
# disputed stream points (1 CTA at 1/4/16 KiB steps, 8 CTAs at 4 KiB) three more times in separate
# processes, to see how much one reading moves. Estimated from the reference rates: ~1 min of GPU
# time on an H200 (the 1-CTA stream points dominate: 4 GiB at 9-17 GB/s, 6 runs each) plus the build.
#
#   experiments/calibration/device_run.sh [--out DIR] [--arch NN]   (default DIR: experiments/calibration/out)
#
# Then the cp.async issue test (kernels/cuda/async_copy_issue.cu), the mma.sync rate
# (kernels/cuda/mma_sync_rate.cu), on sm_90 wgmma beside MUFU and FFMA (kernels/cuda/wgmma_sfu.cu), and the
# softmax phases (kernels/cuda/softmax_phases.cu), a few seconds each, and the SM clock under
# each kind of load (kernels/cuda/sm_clock.cu, about 3 s), and shared reads beside cp.async fills
# (kernels/cuda/smem_fill.cu).
# Writes DIR/gpu.txt, DIR/microbench.json, DIR/repeat_1.json .. repeat_3.json,
# DIR/async_copy_issue_1cta.json, DIR/async_copy_issue_per_sm.json, DIR/mma_sync_rate.json,
# DIR/wgmma_sfu.json (sm_90), DIR/softmax_phases.json, DIR/sm_clock.json, DIR/smem_fill.json,
# DIR/decisions.txt
# (experiments/calibration/decide.py's reading of them), DIR/log.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/experiments/calibration/out"
arch=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "device_run.sh: --out needs a value" >&2; exit 2; }; out="$2"; shift 2 ;;
    --arch) [ $# -ge 2 ] || { echo "device_run.sh: --arch needs a value" >&2; exit 2; }; arch=(--arch "$2"); shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "device_run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"
exec > >(tee "$out/log.txt") 2>&1
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,temperature.gpu \
    --format=csv || true
  nvidia-smi -q -d CLOCK,PERFORMANCE || true
} > "$out/gpu.txt" 2>&1
"$root/scripts/measure_microbench.sh" --out "$out" "${arch[@]}"
for i in 1 2 3; do
  "$out/attnsim_cuda_microbench" --skip-chase --skip-copy --stream-points 1:1024,1:4096,1:16384,8:4096 \
    --out "$out/repeat_$i.json"
done
# Whether a cp.async holds its warp until the load credits let its lines go (sm.queue_async_copies,
# docs/accuracy.md §6): one CTA alone, then one per SM.
nvcc -arch="sm_${arch[1]:-90}" -O3 -std=c++17 -I"$root" -o "$out/attnsim_cuda_async_copy_issue" \
  "$root/kernels/cuda/async_copy_issue.cu"
"$out/attnsim_cuda_async_copy_issue" --ctas 1 > "$out/async_copy_issue_1cta.json"
"$out/attnsim_cuda_async_copy_issue" --ctas 0 > "$out/async_copy_issue_per_sm.json"
# The mma.sync rate of one SM, alone and beside FP32 / MUFU work (sm.mma.mma_sync; docs/accuracy.md §6).
nvcc -arch="sm_${arch[1]:-90}" -O3 -std=c++17 -I"$root" -o "$out/attnsim_cuda_mma_sync_rate" \
  "$root/kernels/cuda/mma_sync_rate.cu"
"$out/attnsim_cuda_mma_sync_rate" > "$out/mma_sync_rate.json"
# Whether one warp group's exponentials overlap other groups' wgmmas (FA-3's time; wgmma needs
# the arch-specific sm_90a target, so only on Hopper).
if [ "${arch[1]:-90}" = 90 ]; then
  nvcc -gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -I"$root" -o "$out/attnsim_cuda_wgmma_sfu" \
    "$root/kernels/cuda/wgmma_sfu.cu"
  "$out/attnsim_cuda_wgmma_sfu" > "$out/wgmma_sfu.json"
fi
# Where softmax_warp_forward's time goes (kernels.csv's softmax rows; docs/accuracy.md §3).
nvcc -arch="sm_${arch[1]:-90}" -O3 -std=c++17 -I"$root" -o "$out/attnsim_cuda_softmax_phases" \
  "$root/kernels/cuda/softmax_phases.cu"
"$out/attnsim_cuda_softmax_phases" > "$out/softmax_phases.json"
# The SM clock under issue-, tensor- and HBM-heavy load (docs/accuracy.md, "Open items").
nvcc -arch="sm_${arch[1]:-90}" -O3 -std=c++17 -I"$root" -o "$out/attnsim_cuda_sm_clock" \
  "$root/kernels/cuda/sm_clock.cu"
"$out/attnsim_cuda_sm_clock" > "$out/sm_clock.json"
# Whether cp.async's writes into shared memory slow shared reads (sm.async_fills_take_banks, docs/accuracy.md §6).
nvcc -arch="sm_${arch[1]:-90}" -O3 -std=c++17 -I"$root" -o "$out/attnsim_cuda_smem_fill" \
  "$root/kernels/cuda/smem_fill.cu"
"$out/attnsim_cuda_smem_fill" > "$out/smem_fill.json"
# What each reading decides for the preset (experiments/calibration/decide.py; needs python3 with yaml).
python3 "$root/experiments/calibration/decide.py" "$out" > "$out/decisions.txt" || true
cat "$out/decisions.txt" 2>/dev/null || true
echo "done: $out"
