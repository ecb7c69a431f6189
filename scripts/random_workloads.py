#!/usr/bin/python3
"""Writes N random `attnsim run` workloads (kernels, devices, shapes, GQA, tiles, passes) as a list
for scripts/sampled_vs_full.py, to find where sampled mode departs from full beyond the curated
lists of experiments/sampling/. The same --seed gives the same list. Each candidate is kept only
if the binary accepts it and estimates at most --max-events events for a full run (checked with
`attnsim run ... --max-memory 1`, which resolves the workload and refuses to run it); refused
shapes are drawn again.

Usage: scripts/random_workloads.py [--binary build/attnsim] [-n 50] [--seed 1] [--max-events 3e6]
       > random.txt && scripts/sampled_vs_full.py random.txt
Exit 0; 2 on bad arguments or a binary that cannot be run."""
import argparse
import random
import re
import subprocess
import sys

DEVICES = ["h200", "h100-sxm", "a100-80gb"]
KERNELS = ["flash2", "flash2", "flash2", "flash3", "standard", "flash1", "flash_decode"]


def draw(rng):
    kernel = rng.choice(KERNELS)
    device = rng.choice(["h200", "h100-sxm"] if kernel == "flash3" else DEVICES)
    heads = rng.choice([4, 8, 16, 32])
    s = {"batch": rng.choice([1, 2, 4]), "heads": heads,
         "kv_heads": rng.choice([h for h in (1, 2, 4, 8, heads) if heads % h == 0]),
         "head_dim": rng.choice([64, 128, 256]), "causal": rng.choice(["true", "false", "false"])}
    if kernel == "flash_decode":
        s.update(batch=rng.choice([8, 16, 32]), seq_q=1, seq_kv=rng.choice([4096, 16384, 32768]), causal="false")
    else:
        s["seq"] = rng.choice([1024, 2048, 4096])
    if kernel == "flash2" and rng.random() < 0.4:
        s["impl"] = "triton"
    if kernel == "flash2" and rng.random() < 0.4:
        s.update(block_m=rng.choice([32, 64, 128]), block_n=rng.choice([32, 64, 128]),
                 warps=rng.choice([2, 4, 8]), stages=rng.choice([2, 3]))
    if rng.random() < 0.2:
        s["cta_order"] = "head-major"
    if kernel in ("flash2", "standard") and rng.random() < 0.2:
        s["pass"] = "fwdbwd"
    return ["--device", device, "--kernel", kernel] + [a for k, v in s.items() for a in ("--set", f"{k}={v}")]


def estimated_events(binary, args):
    """Events a full run of `args` would simulate, or None where the binary refuses the workload."""
    p = subprocess.run([binary, "run", *args, "--max-memory", "1"], capture_output=True, text=True)
    m = re.search(r"--max-memory: refusing to run: .*~([0-9.e+]+) events", p.stderr)
    return float(m.group(1)) if p.returncode == 2 and m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default="build/attnsim")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-events", type=float, default=3e6)
    a = ap.parse_args()
    if a.n < 1 or a.max_events <= 0:
        ap.error("-n and --max-events must be positive")
    try:
        subprocess.run([a.binary, "--help"], capture_output=True, check=False)
    except OSError as e:
        print(f"random_workloads.py: cannot run {a.binary}: {e}", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    print(f"# {a.n} random workloads, --seed {a.seed}, at most {a.max_events:g} events in full (scripts/random_workloads.py)")
    kept = tries = 0
    while kept < a.n:
        tries += 1
        if tries > 100 * a.n:
            print(f"random_workloads.py: only {kept} of {a.n} workloads accepted in {tries - 1} draws", file=sys.stderr)
            return 2
        args = draw(rng)
        events = estimated_events(a.binary, args)
        if events is None or events > a.max_events:
            continue
        print(" ".join(args))
        kept += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
