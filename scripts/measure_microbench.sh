#!/usr/bin/env bash
# Builds and runs the calibration microbenchmarks (kernels/cuda/microbench.cu) on the GPU at hand
# and writes DIR/microbench.json, in the schema of tests/data/reference/microbench.json
# (docs/calibration.md, section 2, steps 2-4: device attributes, pointer chase, stream read,
# device-to-device copy).
#
#   scripts/measure_microbench.sh [--out DIR] [--arch NN] [-- MICROBENCH-OPTIONS...]
#
#   --out DIR   where attnsim_cuda_microbench and microbench.json go
#               (default experiments/calibration/out)
#   --arch NN   compute capability without the dot (default: nvidia-smi's, else 90)
#   -- ...      passed on to attnsim_cuda_microbench, e.g. -- --device 1 --repeats 9
#               --chase-mib 0.0625,0.125,1,8,32,48,96,256,1024 --stream-points 1:4096,132:16384
#               (`attnsim_cuda_microbench --help` lists them; the default run takes minutes)
#
# Lock the clocks first for repeatable numbers (nvidia-smi -lgc MHZ; nvidia-smi -rgc undoes it):
# the pointer chase counts SM cycles, the stream read and copy time in milliseconds.
#
# Then, on any machine with attnsim:
#   /usr/bin/python3 scripts/calibrate.py --device PRESET --measured DIR/microbench.json
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/experiments/calibration/out"
arch=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "measure_microbench.sh: --out needs a value" >&2; exit 2; }
           out="$2"; shift 2 ;;
    --arch) [ $# -ge 2 ] || { echo "measure_microbench.sh: --arch needs a value" >&2; exit 2; }
            arch="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "measure_microbench.sh: unknown argument $1 (options for the program go after --)" >&2; exit 2 ;;
  esac
done
# Everything left is for attnsim_cuda_microbench; the output file is this script's.
for a in "$@"; do
  if [ "$a" = "--out" ]; then
    echo "measure_microbench.sh: give --out DIR before --, not to the program" >&2
    exit 2
  fi
done

command -v nvcc >/dev/null || { echo "measure_microbench.sh: nvcc not on PATH" >&2; exit 2; }
if [ -z "$arch" ]; then
  arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')" || true
  arch="${arch:-90}"
fi
case "$arch" in
  *[!0-9]*|"") echo "measure_microbench.sh: --arch wants digits like 90 or 80, not '$arch'" >&2; exit 2 ;;
esac
mkdir -p "$out"
bin="$out/attnsim_cuda_microbench"
echo "building $bin for sm_$arch"
nvcc -std=c++17 -O3 -arch="sm_$arch" -Xcompiler=-Wall,-Wextra -o "$bin" "$root/kernels/cuda/microbench.cu"

json="$out/microbench.json"
echo "running $bin $* (progress below; the default run takes minutes)"
"$bin" --out "$json" "$@"
echo "wrote $json"
echo "next: /usr/bin/python3 scripts/calibrate.py --device PRESET --measured $json"
echo "      (PRESET: the closest configs/devices/ preset, e.g. h100-sxm; see docs/calibration.md)"
