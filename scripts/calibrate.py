#!/usr/bin/env python3
"""Checks a device preset against microbenchmarks measured on a GPU (docs/calibration.md, step 5).

    /usr/bin/python3 scripts/calibrate.py --device PRESET_OR_YAML --measured microbench.json
        [--attnsim build/attnsim] [--set KEY=VALUE ...] [--only chase,stream,copy]
        [--chase-tolerance 0.10] [--stream-tolerance 0.15] [--copy-tolerance 0.05]
        [--stream-mib 64] [-j N] [--json]

microbench.json has the layout of tests/data/reference/microbench.json (the H200 reference) and
of what kernels/cuda/microbench.cu writes (scripts/measure_microbench.sh): `pointer_chase.points`
(working_set_MiB, cycles_per_load), `stream_read.points` (programs, warps, bytes_per_step, GBps),
`copy_bandwidth.GBps`, `device_attributes`. For every measured point the script runs the same
microbenchmark through `attnsim run --json` on the device and prints measured, simulated and the
relative error (simulated / measured - 1), then the starting values the recipe's formulas give
for the timing keys (steps 3 and 4), read off the measurements, next to the preset's values.

What is simulated, point by point (as tests/engine/calibration_test.cpp does for the h200 preset):
- pointer chase: `pointer_chase` with working_set_bytes = working_set_MiB MiB; cycles per load is
  the kernel's `attnsim__cycles_per_load`;
- stream read: `stream_read` with the point's programs, warps and bytes_per_step, shortened: each
  CTA reads S steps, S = --stream-mib MiB / (programs x bytes_per_step) clamped to [3, 24], so small
  grids reach steady state and large ones keep their waves; GB/s = dram__bytes_read.sum / time;
- copy: `stream_copy` of 2 GiB in 8 KiB CTAs (PyTorch's vectorized copy), whatever size the measured copy
  had; GB/s = read + written.

Exit status: 0 when every point is within its tolerance, 1 when one is not (the table says which),
2 for bad usage or a measurement file that cannot be read (the message names the file and key),
3 when attnsim fails on a point.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("chase", "stream", "copy")


class BadInput(Exception):
    pass


def load_measured(path, kinds):
    """The points of `path` for the requested kinds, as (kind, label, params, measured) tuples."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: line {e.lineno}: not JSON: {e.msg}")
    if not isinstance(doc, dict):
        raise BadInput(f"{path}: expected a JSON object with pointer_chase / stream_read / copy_bandwidth")

    def points(key, fields):
        sec = doc.get(key)
        if sec is None:
            return []
        pts = sec.get("points") if isinstance(sec, dict) else None
        if not isinstance(pts, list):
            raise BadInput(f"{path}: key {key}.points: expected a list of points")
        for i, p in enumerate(pts):
            for k in fields:
                v = p.get(k) if isinstance(p, dict) else None
                if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                    raise BadInput(f"{path}: key {key}.points[{i}].{k}: expected a positive number, got {v!r}")
        return pts

    out = []
    if "chase" in kinds:
        for p in points("pointer_chase", ("working_set_MiB", "cycles_per_load")):
            ws = int(round(p["working_set_MiB"] * 1024 * 1024))
            out.append(("chase", f"{p['working_set_MiB']:g} MiB", {"working_set_bytes": ws}, float(p["cycles_per_load"])))
    if "stream" in kinds:
        for p in points("stream_read", ("programs", "bytes_per_step", "GBps")):
            warps = p.get("warps", 4)
            if not isinstance(warps, int) or warps <= 0:
                raise BadInput(f"{path}: key stream_read.points.warps: expected a positive integer, got {warps!r}")
            params = {"programs": int(p["programs"]), "bytes_per_step": int(p["bytes_per_step"]), "warps": warps}
            out.append(("stream", f"{params['bytes_per_step']} B x {params['programs']} CTAs", params, float(p["GBps"])))
    if "copy" in kinds and "copy_bandwidth" in doc:
        c = doc["copy_bandwidth"]
        g = c.get("GBps") if isinstance(c, dict) else None
        if not isinstance(g, (int, float)) or isinstance(g, bool) or g <= 0:
            raise BadInput(f"{path}: key copy_bandwidth.GBps: expected a positive number, got {g!r}")
        out.append(("copy", "device to device", {}, float(g)))
    if not out:
        raise BadInput(f"{path}: no pointer_chase, stream_read or copy_bandwidth points for --only {','.join(kinds)}")
    return doc, out


def attnsim_args(kind, params, stream_mib):
    """attnsim run arguments (after --device) for one point, and what the result is divided by."""
    if kind == "chase":
        return ["--kernel", "pointer_chase", "--set", f"working_set_bytes={params['working_set_bytes']}"], None
    if kind == "stream":
        step, programs = params["bytes_per_step"], params["programs"]
        steps = min(24, max(3, (stream_mib << 20) // (programs * step)))
        return ["--kernel", "stream_read", "--set", f"programs={programs}", "--set", f"warps={params['warps']}",
                "--set", f"bytes_per_step={step}", "--set", f"total_bytes={programs * steps * step}"], None
    total = 2 << 30
    return ["--kernel", "stream_copy", "--set", "bytes_per_step=8192", "--set", f"programs={total // 8192}",
            "--set", f"total_bytes={total}"], 2 * total


def simulate(attnsim, device, sets, kind, params, stream_mib):
    args, copy_bytes = attnsim_args(kind, params, stream_mib)
    cmd = [attnsim, "run", "--device", device] + args + [a for s in sets for a in ("--set", s)] + ["--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, f"`{' '.join(cmd)}` exited {p.returncode}: {p.stderr.strip()}"
    metrics = json.loads(p.stdout)["kernels"][0]["metrics"]
    if kind == "chase":
        return metrics["attnsim__cycles_per_load"], None
    ns = metrics["gpu__time_duration.sum"]
    return (copy_bytes if copy_bytes else metrics["dram__bytes_read.sum"]) / ns, None


def device_json(attnsim, device, sets):
    """The device section and a few keys of the resolved preset, from a tiny attnsim run."""
    cmd = [attnsim, "run", "--device", device, "--kernel", "pointer_chase", "--set", "working_set_bytes=4096"]
    cmd += [a for s in sets for a in ("--set", s)] + ["--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise BadInput(p.stderr.strip() or f"attnsim exited {p.returncode}")
    return json.loads(p.stdout)["device"]


def preset_value(device, sets, key):
    """A device YAML key (dotted) of a preset name or a YAML path, with --set device.KEY overrides."""
    for s in sets:
        k, _, v = s.partition("=")
        if k == "device." + key:
            return v
    path = device if os.path.exists(device) else os.path.join(ROOT, "configs", "devices", device + ".yaml")
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return None
    want = key.split(".")
    stack = []
    for line in lines:
        text = line.split("#", 1)[0].rstrip()
        if not text.strip() or ":" not in text:
            continue
        indent = len(text) - len(text.lstrip())
        name, _, value = text.strip().partition(":")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, name.strip()))
        if [n for _, n in stack] == want:
            return value.strip() or None
    return None


def starting_values(doc, dev, device, sets):
    """Recipe steps 3 and 4: timing keys read off the measurements, with the preset's values."""
    rows = []
    clock = dev.get("clock_ghz") or 1.0
    l2 = dev.get("l2_capacity_bytes") or 0
    chase = [p for p in (doc.get("pointer_chase") or {}).get("points", []) if isinstance(p, dict)]
    by_size = sorted(((p["working_set_MiB"] * 2**20, p["cycles_per_load"]) for p in chase), key=lambda x: x[0])

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if len(xs) % 2 else 0.5 * (xs[len(xs) // 2 - 1] + xs[len(xs) // 2])

    if by_size:
        rows.append(("sm.l1_hit_latency_cycles", by_size[0][1], "smallest working set"))
    if l2:
        near = [c for s, c in by_size[1:] if s <= l2 / 4]
        dram = [c for s, c in by_size if s >= 4 * l2]
        if near:
            rows.append(("l2.near_hit_latency_cycles", median(near), "working sets above the first, up to L2/4"))
        if dram:
            rows.append(("hbm.latency_cycles", median(dram), "working sets of 4x the L2 or more (includes TLB misses)"))
    stream = [p for p in (doc.get("stream_read") or {}).get("points", []) if isinstance(p, dict)]
    one = [p for p in stream if p.get("programs") == 1]
    lat = next((v for k, v, _ in rows if k == "hbm.latency_cycles"), None)
    if one and lat:
        p = max(one, key=lambda q: q["bytes_per_step"])  # the largest step: limited by in-flight bytes, not by the step
        per_cycle = p["GBps"] / clock  # bytes per SM cycle
        rows.append(("sm.max_inflight_bytes_per_warp", per_cycle * lat / p.get("warps", 4),
                     f"1 CTA x {p['bytes_per_step']} B: {per_cycle:.2f} B/cycle x latency / {p.get('warps', 4)} warps"))
    sat = max((p["GBps"] for p in stream), default=None)
    if sat:
        rows.append(("hbm.bandwidth_gbps (check)", sat, "the stream plateau; keep the datasheet peak if within ~5 %"))
    return [(k, v, preset_value(device, sets, k.split(" ")[0]), why) for k, v, why in rows]


def main(argv):
    ap = argparse.ArgumentParser(
        prog="calibrate.py", description=__doc__.split("\n\n")[0],
        epilog="Example: /usr/bin/python3 scripts/calibrate.py --device h200 "
               "--measured tests/data/reference/microbench.json --only chase,stream -j 2",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", required=True, help="preset name or device YAML path")
    ap.add_argument("--measured", required=True, help="microbench.json measured on the GPU")
    ap.add_argument("--attnsim", default=os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim")),
                    help="attnsim binary (default $ATTNSIM or build/attnsim)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to attnsim run (e.g. device.hbm.latency_cycles=700); repeatable")
    ap.add_argument("--only", default="chase,stream,copy", help="comma-separated subset of chase,stream,copy")
    ap.add_argument("--chase-tolerance", type=float, default=0.10, help="relative, default 0.10")
    ap.add_argument("--stream-tolerance", type=float, default=0.15, help="relative, default 0.15")
    ap.add_argument("--copy-tolerance", type=float, default=0.05, help="relative, default 0.05")
    ap.add_argument("--stream-mib", type=int, default=64,
                    help="simulated stream length per point in MiB before clamping to 3..24 steps (default 64)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="attnsim runs at a time (default 1)")
    ap.add_argument("--json", action="store_true", help="print the comparison as JSON instead of tables")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    kinds = [k.strip() for k in a.only.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        print(f"calibrate.py: --only: unknown kind {', '.join(bad) or '(none)'}; use chase, stream, copy", file=sys.stderr)
        return 2
    if a.jobs < 1 or a.stream_mib < 1:
        print("calibrate.py: -j and --stream-mib must be at least 1", file=sys.stderr)
        return 2
    for s in a.set:
        if "=" not in s:
            print(f"calibrate.py: --set {s}: expected KEY=VALUE", file=sys.stderr)
            return 2
    if not os.access(a.attnsim, os.X_OK):
        print(f"calibrate.py: no attnsim binary at {a.attnsim} (build it, or pass --attnsim / $ATTNSIM)", file=sys.stderr)
        return 2
    try:
        doc, pts = load_measured(a.measured, kinds)
        dev = device_json(a.attnsim, a.device, a.set)
    except BadInput as e:
        print(f"calibrate.py: {e}", file=sys.stderr)
        return 2

    tol = {"chase": a.chase_tolerance, "stream": a.stream_tolerance, "copy": a.copy_tolerance}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futs = [pool.submit(simulate, a.attnsim, a.device, a.set, k, p, a.stream_mib) for k, _, p, _ in pts]
        results = []
        progress = sys.stderr.isatty() and not a.json
        for i, f in enumerate(futs):
            results.append(f.result())
            if progress:
                print(f"\r{i + 1}/{len(futs)} points simulated", end="", file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
    errors = [err for _, err in results if err]
    if errors:
        print(f"calibrate.py: {errors[0]}", file=sys.stderr)
        return 3

    rows = []
    for (kind, label, params, meas), (sim, _) in zip(pts, results):
        rel = sim / meas - 1
        rows.append({"kind": kind, "point": label, "measured": meas, "simulated": sim,
                     "unit": "cycles/load" if kind == "chase" else "GB/s", "error": rel,
                     "tolerance": tol[kind], "within": abs(rel) <= tol[kind]})
    start = starting_values(doc, dev, a.device, a.set)
    outside = [r for r in rows if not r["within"]]
    if a.json:
        json.dump({"device": dev.get("name"), "measured": a.measured, "points": rows,
                   "starting_values": [{"key": k, "from_measurements": v, "preset": p, "how": w} for k, v, p, w in start],
                   "within": len(rows) - len(outside), "outside": len(outside)}, sys.stdout, indent=1)
        print()
    else:
        print(f"device {dev.get('name')} against {a.measured} (error = simulated / measured - 1)")
        print(f"{'kind':<7}{'point':<24}{'measured':>12}{'simulated':>12}  {'unit':<12}{'error':>8}  within")
        for r in rows:
            print(f"{r['kind']:<7}{r['point']:<24}{r['measured']:>12.1f}{r['simulated']:>12.1f}  {r['unit']:<12}"
                  f"{100 * r['error']:>+7.1f}%  {'yes' if r['within'] else 'NO (tolerance ' + format(r['tolerance'], '.0%') + ')'}")
        for kind in KINDS:
            ks = [r for r in rows if r["kind"] == kind]
            if ks:
                worst = max(ks, key=lambda r: abs(r["error"]))
                print(f"{kind}: {sum(r['within'] for r in ks)}/{len(ks)} within {tol[kind]:.0%}, "
                      f"worst {100 * worst['error']:+.1f} % ({worst['point']})")
        if start:
            print("\nstarting values from the measurements (recipe steps 3-4; the preset may be calibrated beyond them):")
            for k, v, p, w in start:
                print(f"  {k:<34}{v:>10.1f}   preset: {p if p is not None else '-':<8}  {w}")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
