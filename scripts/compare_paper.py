#!/usr/bin/python3
"""Simulated TFLOP/s against the FlashAttention-3 paper's H100 SXM5 figures (tests/data/reference/fa3_paper_{fwd,bwd}.csv).

For one implementation column of the paper (fa2, triton, standard, fa3, ...) the script runs
`attnsim sweep` on every point of that column (same batch, heads, seq_len, head_dim, causal,
dtype), converts the simulated time to TFLOP/s with the paper's convention (4·B·H·N²·d / time,
halved for causal; the backward counted as 2.5 forwards, with --pass bwd the time of the
backward's launches only: those whose name contains "_bwd") and prints per point the measured and simulated TFLOP/s and the relative
error (simulated / measured − 1), then the median and worst |error|, the Spearman rank
correlation of the points, and the plateau check (simulated TFLOP/s at N = 16k within 5 % of
N = 8k for every head_dim / causal group where the paper's is). The launches of a pass run back to
back as the paper's wall-clock timer saw them (device.l2.carry_writeback true; --set
device.l2.carry_writeback=false for each launch on idle HBM channels).

    scripts/compare_paper.py --impl fa2                       # all fa2,fp16 rows, device h100-sxm
    scripts/compare_paper.py --pass bwd --impl fa3            # the backward figure (fa3_paper_bwd.csv)
    scripts/compare_paper.py --impl triton --seq-len 1024 2048 --json out.json
    scripts/compare_paper.py --impl fa3 --speedup-vs fa2           # + FA-3/FA-2 speed-up per point
    scripts/compare_paper.py --ablation                           # flash3 vs the paper's Table 2

--speedup-vs OTHER also simulates the OTHER column's points in the same run and compares the
simulated speed-up (impl TFLOP/s / OTHER TFLOP/s) per point with the paper's (within 10 %:
|simulated / paper - 1| <= 0.10). --ablation runs the paper's Table 2 shape (batch 4, seq 8448,
16 heads, head dim 128, fp16, non-causal) with flash3 as is and with intrawg_overlap off, and
prints both times and the slow-down against the paper's (3.538 ms; 4.021 ms without the
GEMM-softmax pipelining; docs/references.md).

Which attnsim kernel simulates which column: IMPLS below (one line per implementation). Runs
under /usr/bin/python3 (numpy, h5py); needs a built attnsim (build/attnsim or $ATTNSIM).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnsim_results as ar  # noqa: E402

CSVS = {p: os.path.join(ar.ROOT, "tests", "data", "reference", f"fa3_paper_{p}.csv") for p in ("fwd", "bwd")}
CSV = CSVS["fwd"]
# The paper's FLOP count of a pass in forwards (benchmarks/benchmark_flash_attention.py, flops()).
PASS_FLOPS = {"fwd": 1.0, "bwd": 2.5}

# Paper column -> attnsim kernel and the workload keys that select the implementation.
IMPLS = {
    "fa2": {"kernel": "flash2", "keys": {"impl": "fa2"}},        # Dao-AILab CUDA FlashAttention-2
    # Triton's FlashAttention as the paper ran it: FlashAttention's hopper/benchmark_flash_attention.py
    # (Dao-AILab/flash-attention 1899c97) imports triton.ops.flash_attention, whose forward launches
    # BLOCK_M 128, BLOCK_N 64, num_stages 4 and num_warps 4 (head dim <= 64) or 8 (triton-lang/triton
    # python/triton/ops/flash_attention.py, 022ef48): a block-pointer (cp.async) kernel.
    "triton": {"kernel": "flash2", "keys": {"impl": "triton", "tma": False},
               "per_head_dim": lambda d: {"block_m": 128, "block_n": 64, "stages": 4, "warps": 4 if d <= 64 else 8}},
    # PyTorch eager attention as FlashAttention's benchmark runs it (attention_pytorch: packed qkv),
    # with the row softmax of PyTorch 2.3, the stable release when the paper was measured (July
    # 2024): rows of more than 1024 values go through the three-pass block kernel (docs/kernels.md).
    "standard": {"kernel": "standard", "keys": {"qkv_packed": True, "pytorch": "2.3"}},
    "fa3": {"kernel": "flash3", "keys": {}},                     # FlashAttention-3
}

TIME = "gpu__time_duration.sum"
# The paper timed each pass with torch.utils.benchmark (wall clock, kernels back to back, no cache
# flush between them): each launch's final L2 write-back occupies the next one's HBM channels.
BACK_TO_BACK = {"device.l2.carry_writeback": "true"}


def read_points(impl, dtype, head_dims=None, seq_lens=None, causal=None, pass_="fwd"):
    """The CSV rows of one implementation and dtype, optionally filtered."""
    rows = []
    with open(CSVS[pass_]) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if r["impl"] != impl or r["dtype"] != dtype:
                continue
            p = {"head_dim": int(r["head_dim"]), "causal": r["causal"] == "true", "seq_len": int(r["seq_len"]),
                 "batch": int(r["batch"]), "heads": int(r["heads"]), "tflops": float(r["tflops"])}
            if head_dims and p["head_dim"] not in head_dims:
                continue
            if seq_lens and p["seq_len"] not in seq_lens:
                continue
            if causal is not None and p["causal"] != causal:
                continue
            rows.append(p)
    return rows


def flops(p, pass_="fwd"):
    f = PASS_FLOPS[pass_] * 4.0 * p["batch"] * p["heads"] * p["seq_len"] ** 2 * p["head_dim"]
    return f / 2 if p["causal"] else f


def sweep_spec(impl, dtype, device, points, overrides, pass_="fwd"):
    m = IMPLS[impl]
    base = {"kernel": m["kernel"], "dtype": dtype, "pass": "fwd" if pass_ == "fwd" else "fwdbwd"}
    base.update(m["keys"])
    zip_axes = {k: [] for k in ("batch", "heads", "seq", "head_dim", "causal")}
    per_d = m.get("per_head_dim")
    if per_d:
        for k in per_d(64):
            zip_axes[k] = []
    for p in points:
        if per_d:
            for k, v in per_d(p["head_dim"]).items():
                zip_axes[k].append(v)
        zip_axes["batch"].append(p["batch"])
        zip_axes["heads"].append(p["heads"])
        zip_axes["seq"].append(p["seq_len"])
        zip_axes["head_dim"].append(p["head_dim"])
        zip_axes["causal"].append(p["causal"])
    spec = {"name": f"fa3_paper_{impl}_{dtype}_{pass_}", "device": device, "base": base, "axes": {"zip": zip_axes}}
    spec["set"] = {**BACK_TO_BACK, **overrides}
    return spec


def yaml_text(spec):
    """The sweep as YAML (flow lists; values are numbers, booleans and plain words)."""
    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return str(v)

    lines = [f"name: {spec['name']}", f"device: {spec['device']}", "base:"]
    lines += [f"  {k}: {val(v)}" for k, v in spec["base"].items()]
    if "set" in spec:
        lines.append("set:")
        lines += [f"  {k}: {val(v)}" for k, v in spec["set"].items()]
    lines += ["axes:", "  zip:"]
    lines += [f"    {k}: {val(v)}" for k, v in spec["axes"]["zip"].items()]
    return "\n".join(lines) + "\n"


def simulate(spec, jobs, binary, pass_="fwd"):
    """Runs the sweep; returns the simulated time (ns) per point, in the order of the zip (with
    pass bwd: the sum over the point's backward launches)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sweep.yaml")
        out = os.path.join(d, "out.h5")
        with open(path, "w") as f:
            f.write(yaml_text(spec))
        r = subprocess.run([binary, "sweep", path, "--out", out, "-j", str(jobs)],
                           capture_output=True, text=True)
        if r.returncode not in (0, 3) or not os.path.exists(out):
            raise SystemExit(f"attnsim sweep failed ({r.returncode}):\n{r.stderr}")
        res = ar.Results(out)
        status = res.col("status")
        times = np.array(res.col(TIME), dtype=float)
        if pass_ == "bwd":
            times = np.array([sum(float(m[TIME]) for name, m in res.kernels(i) if "_bwd" in name)
                              for i in range(len(times))])
        times[status != ar.STATUS_OK] = np.nan
        res.close()
        return times


def rank(x):
    """Average ranks (ties share the mean rank)."""
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    xs = np.asarray(x)[order]
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1
        i = j + 1
    return ranks


def spearman(a, b):
    if len(a) < 2:
        return float("nan")
    ra, rb = rank(a), rank(b)
    return float(np.corrcoef(ra, rb)[0, 1])


def plateau(points, sim_tflops):
    """Per (head_dim, causal) group with both 8k and 16k: measured and simulated 16k/8k − 1."""
    by = {}
    for p, s in zip(points, sim_tflops):
        by.setdefault((p["head_dim"], p["causal"]), {})[p["seq_len"]] = (p["tflops"], s)
    out = []
    for (d, c), g in sorted(by.items()):
        if 8192 in g and 16384 in g:
            (m8, s8), (m16, s16) = g[8192], g[16384]
            out.append({"head_dim": d, "causal": c, "measured": m16 / m8 - 1, "simulated": s16 / s8 - 1})
    return out


def compare(impl, dtype="fp16", device="h100-sxm", jobs=2, binary=None, head_dims=None, seq_lens=None, causal=None,
            overrides=None, pass_="fwd"):
    """Runs the comparison; returns a dict with the points and the summary (see main's output)."""
    binary = binary or ar.attnsim_binary()
    if binary is None:
        raise SystemExit("attnsim binary not found (build it, or set $ATTNSIM)")
    points = read_points(impl, dtype, head_dims, seq_lens, causal, pass_)
    if not points:
        raise SystemExit(f"no {impl},{dtype} rows in {CSVS[pass_]} for this selection")
    times = simulate(sweep_spec(impl, dtype, device, points, overrides or {}, pass_), jobs, binary, pass_)
    sim = [flops(p, pass_) / (t * 1e-9) / 1e12 if t > 0 else float("nan") for p, t in zip(points, times)]
    for p, s in zip(points, sim):
        p["simulated"] = s
        p["error"] = s / p["tflops"] - 1
    errs = np.array([abs(p["error"]) for p in points])
    ok = np.isfinite(errs)
    worst = int(np.nanargmax(errs)) if ok.any() else 0
    summary = {
        "impl": impl, "dtype": dtype, "device": device, "pass": pass_, "points": len(points), "simulated_ok": int(ok.sum()),
        "median_abs_error": float(np.median(errs[ok])) if ok.any() else float("nan"),
        "worst_abs_error": float(errs[worst]) if ok.any() else float("nan"),
        "worst_at": {k: points[worst][k] for k in ("head_dim", "causal", "seq_len")},
        "spearman": spearman([p["tflops"] for p in points], sim),
        "plateau": plateau(points, sim),
    }
    return {"points": points, "summary": summary}


def speedup(r, other):
    """Adds the speed-up of r's points over `other`'s (a compare() result over the same points)."""
    by = {(p["head_dim"], p["causal"], p["seq_len"]): p for p in other["points"]}
    rows = []
    for p in r["points"]:
        o = by.get((p["head_dim"], p["causal"], p["seq_len"]))
        if o is None:
            continue
        paper, sim = p["tflops"] / o["tflops"], p["simulated"] / o["simulated"]
        rows.append({"head_dim": p["head_dim"], "causal": p["causal"], "seq_len": p["seq_len"],
                     "paper": paper, "simulated": sim, "error": sim / paper - 1})
    errs = np.array([abs(x["error"]) for x in rows])
    ok = np.isfinite(errs)
    return {"vs": other["summary"]["impl"], "points": rows, "within_10pct": int((errs[ok] <= 0.10).sum()),
            "median_abs_error": float(np.median(errs[ok])) if ok.any() else float("nan"),
            "worst_abs_error": float(np.max(errs[ok])) if ok.any() else float("nan")}


# The paper's Table 2 (docs/references.md): batch 4, seq 8448, 16 heads, head dim 128, fp16.
ABLATION_SHAPE = {"batch": 4, "heads": 16, "seq_len": 8448, "head_dim": 128, "causal": False}
ABLATION_MS = {"full": 3.538, "no_intrawg_overlap": 4.021}


def ablation(device="h100-sxm", jobs=2, binary=None, overrides=None):
    """flash3 at the Table 2 shape with and without intrawg_overlap; times in ms and slow-downs.
    `overrides`: {"device.KEY": value} under the sweep's `set:`, as for compare()."""
    binary = binary or ar.attnsim_binary()
    if binary is None:
        raise SystemExit("attnsim binary not found (build it, or set $ATTNSIM)")
    p = dict(ABLATION_SHAPE, tflops=0.0)
    spec = sweep_spec("fa3", "fp16", device, [p, p], overrides or {})
    spec["axes"]["zip"]["intrawg_overlap"] = [True, False]
    t = simulate(spec, jobs, binary)
    sim = {"full": t[0] * 1e-6, "no_intrawg_overlap": t[1] * 1e-6}
    return {"shape": ABLATION_SHAPE, "paper_ms": ABLATION_MS, "simulated_ms": sim,
            "paper_slowdown": ABLATION_MS["no_intrawg_overlap"] / ABLATION_MS["full"],
            "simulated_slowdown": sim["no_intrawg_overlap"] / sim["full"]}


def print_ablation(a, out=sys.stdout):
    print("flash3 vs the FA-3 paper's Table 2 (batch 4, seq 8448, 16 heads, d 128, fp16):", file=out)
    for k in ("full", "no_intrawg_overlap"):
        print(f"  {k:<20} paper {a['paper_ms'][k]:.3f} ms   simulated {a['simulated_ms'][k]:.3f} ms", file=out)
    print(f"  slow-down without intra-warp-group overlap: paper {a['paper_slowdown']:.3f}x, "
          f"simulated {a['simulated_slowdown']:.3f}x", file=out)


def print_report(r, out=sys.stdout):
    s = r["summary"]
    what = "backward" if s.get("pass") == "bwd" else "forward"
    print(f"{s['impl']} ({s['dtype']}) on {s['device']}: FA-3 paper's {what} TFLOP/s vs attnsim", file=out)
    print(f"{'d':>4} {'causal':>6} {'N':>6} {'B':>3} {'H':>3} {'measured':>9} {'simulated':>9} {'error':>8}", file=out)
    for p in r["points"]:
        print(f"{p['head_dim']:>4} {str(p['causal']).lower():>6} {p['seq_len']:>6} {p['batch']:>3} {p['heads']:>3} "
              f"{p['tflops']:>9.0f} {p['simulated']:>9.1f} {100 * p['error']:>+7.1f}%", file=out)
    print(f"points: {s['points']} (simulated: {s['simulated_ok']})", file=out)
    print(f"median |error|: {100 * s['median_abs_error']:.1f} %", file=out)
    w = s["worst_at"]
    print(f"worst |error|: {100 * s['worst_abs_error']:.1f} % (d {w['head_dim']}, causal {str(w['causal']).lower()}, "
          f"N {w['seq_len']})", file=out)
    print(f"Spearman rho: {s['spearman']:.3f}", file=out)
    for g in s["plateau"]:
        flat = abs(g["measured"]) <= 0.05
        print(f"plateau d {g['head_dim']} causal {str(g['causal']).lower()}: 16k/8k measured {100 * g['measured']:+.1f} %, "
              f"simulated {100 * g['simulated']:+.1f} %" + (" (within 5 %: " + ("yes" if abs(g['simulated']) <= 0.05 else "NO") + ")"
                                                            if flat else " (silicon not flat)"), file=out)
    if "speedup" in r:
        sp = r["speedup"]
        print(f"speed-up over {sp['vs']} per point (paper / simulated):", file=out)
        for x in sp["points"]:
            print(f"  d {x['head_dim']:>3} causal {str(x['causal']).lower():>5} N {x['seq_len']:>5}: "
                  f"{x['paper']:.2f}x / {x['simulated']:.2f}x ({100 * x['error']:+.1f} %)", file=out)
        print(f"speed-up within 10 % of the paper's: {sp['within_10pct']}/{len(sp['points'])} points; "
              f"median |error| {100 * sp['median_abs_error']:.1f} %, worst {100 * sp['worst_abs_error']:.1f} %",
              file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", choices=sorted(IMPLS), help="the paper's implementation column")
    ap.add_argument("--speedup-vs", choices=sorted(IMPLS), metavar="IMPL",
                    help="also simulate IMPL's column and compare the speed-up per point with the paper's")
    ap.add_argument("--ablation", action="store_true",
                    help="flash3 against the paper's Table 2 (intra-warp-group overlap on / off) instead")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "fp8"])
    ap.add_argument("--pass", dest="pass_", default="fwd", choices=["fwd", "bwd"],
                    help="the paper's forward figures, or its backward figure (fp16, non-causal)")
    ap.add_argument("--device", default="h100-sxm")
    ap.add_argument("--head-dim", type=int, nargs="*", help="only these head dims")
    ap.add_argument("--seq-len", type=int, nargs="*", help="only these sequence lengths")
    ap.add_argument("--causal", choices=["true", "false"], help="only causal or non-causal points")
    ap.add_argument("--set", action="append", default=[], metavar="device.KEY=VALUE",
                    help="device override passed to the sweep (repeatable)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--json", metavar="PATH", help="also write points and summary as JSON")
    a = ap.parse_args(argv)
    overrides = {}
    for kv in a.set:
        k, _, v = kv.partition("=")
        overrides[k] = v
    if a.ablation:
        r = ablation(a.device, a.jobs, overrides=overrides)
        print_ablation(r)
        if a.json:
            ar.write_output(a.json, (json.dumps(r, indent=1) + "\n").encode())
        return 0
    if a.impl is None:
        ap.error("--impl is required (or --ablation)")
    r = compare(a.impl, a.dtype, a.device, a.jobs, head_dims=a.head_dim, seq_lens=a.seq_len,
                causal=None if a.causal is None else a.causal == "true", overrides=overrides, pass_=a.pass_)
    if a.speedup_vs:
        o = compare(a.speedup_vs, a.dtype, a.device, a.jobs, head_dims=a.head_dim, seq_lens=a.seq_len,
                    causal=None if a.causal is None else a.causal == "true", overrides=overrides, pass_=a.pass_)
        r["speedup"] = speedup(r, o)
    print_report(r)
    if a.json:
        ar.write_output(a.json, (json.dumps(r, indent=1) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
