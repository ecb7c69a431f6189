#!/usr/bin/python3
"""Checks the figure scripts and summarize.py on a synthetic results file.

Builds a small file in the schema of docs/hdf5-schema.md with h5py (a /table of equal-length
columns, /points/<i>/{config, metrics, kernels/<k>_<name>/metrics, series}), then runs every
figure script on it (PNG and SVG) and checks each output exists, is non-empty and starts with
the format's magic bytes; checks summarize.py's counts and that bad input is rejected.
With $ATTNSIM set, the closed-form overlay of plot_traffic_vs_block.py is exercised too.
Exits non-zero on any failure.
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
PY = "/usr/bin/python3"
MAGIC = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}

KERNELS = ["standard", "flash2"]
SEQS = [256, 512, 1024]
BLOCKS = [64, 128]
HEAD_DIM, HEADS, BATCH = 64, 2, 1
N_IMPOSSIBLE = 1
N_ERROR = 1


def metric_dtype():
    return np.dtype([("name", h5py.string_dtype()), ("value", "f8")])


def write_metrics(group, metrics):
    arr = np.array(list(metrics.items()), dtype=metric_dtype())
    group.create_dataset("metrics", data=arr)


def synthetic_point(kernel, n, b):
    """Metrics with the shapes the figures plot (not the simulator's values)."""
    bh = BATCH * HEADS
    qkvo = 4 * n * HEAD_DIM * 2 * bh
    dram = qkvo + (4 * n * n * 2 * bh if kernel == "standard" else qkvo * n // (4 * b))
    time_ns = 1000.0 + dram / 3000.0
    flops = 4.0 * n * n * HEAD_DIM * bh
    return {
        "dram__bytes_read.sum": 0.75 * dram,
        "dram__bytes_write.sum": 0.25 * dram,
        "lts__t_bytes.sum": 1.5 * dram,
        "gpu__time_duration.sum": time_ns,
        "sm__warps_active.avg.pct_of_peak_sustained_active": 10.0 + b / 8.0,
        "sm__maximum_warps_per_active_cycle_pct": 12.5 * (256 // b),
        "launch__occupancy_limit_blocks": 32.0,
        "launch__occupancy_limit_registers": 2.0,
        "launch__occupancy_limit_shared_mem": 256.0 // b,
        "launch__occupancy_limit_warps": 16.0,
        "attnsim__flops": flops,
    }, time_ns


def build_file(path):
    rows = []
    for k in KERNELS:
        for n in SEQS:
            for b in BLOCKS:
                rows.append((k, n, b, "ok", ""))
    rows.append(("flash2", 2048, 512, "impossible", "smem_per_cta 262144 exceeds the device limit 232448"))
    rows.append(("flash2", 4096, 512, "error", "progress guard"))
    with h5py.File(path, "w", track_order=True) as f:
        f.attrs["schema_version"] = 1
        f.attrs["complete"] = 1
        f["config"] = "synthetic"
        cols = {c: [] for c in ["point_index", "status", "reason", "kernel", "seq_q", "block_n", "device"]}
        metric_names = list(synthetic_point("flash2", 256, 64)[0].keys())
        for m in metric_names:
            if not m.startswith("launch__"):
                cols[m] = []
        pts = f.create_group("points")
        for i, (k, n, b, status, reason) in enumerate(rows):
            cols["point_index"].append(i)
            cols["status"].append(status)
            cols["reason"].append(reason)
            cols["kernel"].append(k)
            cols["seq_q"].append(n)
            cols["block_n"].append(b)
            cols["device"].append("h200")
            g = pts.create_group(str(i))
            g.attrs["status"] = status
            g.attrs["reason"] = reason
            g["config"] = (f"kernel: {k}\nbatch: {BATCH}\nheads: {HEADS}\nseq_q: {n}\nseq_kv: {n}\n"
                           f"head_dim: {HEAD_DIM}\ndtype: fp16\nblock_m: 64\nblock_n: {b}\ndevice: h200\n")
            if status != "ok":
                for m in metric_names:
                    if m in cols:
                        cols[m].append(np.nan)
                continue
            metrics, time_ns = synthetic_point(k, n, b)
            for m in metric_names:
                if m in cols:
                    cols[m].append(metrics[m])
            write_metrics(g, {m: v for m, v in metrics.items() if not m.startswith("launch__")})
            kg = g.create_group("kernels").create_group(f"0_{k}_fwd")
            kg.attrs["name"] = f"{k}_fwd"
            write_metrics(kg, metrics)
            t = np.linspace(0.0, time_ns, 40)
            sg = g.create_group("series")
            sg.attrs["period_ns"] = time_ns / 39
            sg["time_ns"] = t
            sg["dram_gbps"] = 3000.0 * np.sin(np.linspace(0, np.pi, 40))
            sg["lts_gbps"] = 6000.0 * np.sin(np.linspace(0, np.pi, 40))
            sg["active_warps_pct"] = np.full(40, 25.0)
        tg = f.create_group("table", track_order=True)
        for c, v in cols.items():
            if c in ("status", "reason", "kernel", "device"):
                tg.create_dataset(c, data=np.array(v, dtype=object), dtype=h5py.string_dtype())
            else:
                tg[c] = np.array(v)
    return len(rows)


def check_figure(path):
    ext = os.path.splitext(path)[1]
    if not os.path.isfile(path):
        raise AssertionError(f"{path} was not written")
    with open(path, "rb") as f:
        head = f.read(16)
    if os.path.getsize(path) < 1000 or not head.startswith(MAGIC[ext]):
        raise AssertionError(f"{path} is empty or not a {ext} file")


def run(script, args):
    """Runs a figure script with attnsim_results.savefig's check that no text is cut off."""
    env = dict(os.environ, ATTNSIM_FIGURE_CHECK="1")
    return subprocess.run([PY, os.path.join(SCRIPTS, script)] + args, capture_output=True, text=True, timeout=300,
                          env=env)


def check_real_file(tmp):
    """With $ATTNSIM: a one-point file from the real writer (`attnsim run --out`) goes through
    summarize.py, plot_timeline.py and plot_roofline.py. Skipped (not failed) without it."""
    attnsim = os.environ.get("ATTNSIM")
    if not attnsim or not os.path.exists(attnsim):
        print("skip real-file check ($ATTNSIM not set)")
        return 0
    h5 = os.path.join(tmp, "run.h5")
    proc = subprocess.run([attnsim, "run", "--device", "h200", "--kernel", "flash2", "--set", "seq=256",
                           "--set", "head_dim=64", "--out", h5], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        print(f"FAIL attnsim run --out: rc {proc.returncode}: {proc.stderr.strip()[-400:]}")
        return 1
    failures = 0
    summary = run("summarize.py", [h5])
    if summary.returncode != 0 or "1 point: 1 ok, 0 impossible, 0 error" not in summary.stdout:
        failures += 1
        print(f"FAIL summarize.py on a real run file:\n{summary.stdout}{summary.stderr}")
    for script in ("plot_timeline.py", "plot_roofline.py"):
        out = os.path.join(tmp, "real_" + script.replace(".py", ".png"))
        proc = run(script, [h5, out])
        try:
            if proc.returncode != 0:
                raise AssertionError(f"exit {proc.returncode}: {proc.stderr.strip()[-600:]}")
            check_figure(out)
            print(f"ok   {script} on a real `attnsim run --out` file")
        except AssertionError as e:
            failures += 1
            print(f"FAIL {script} on a real file: {e}")
    return failures


def run_checks():
    """Every check of this file; prints FAIL lines; returns 0 when all passed."""
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        h5 = os.path.join(tmp, "synthetic.h5")
        total = build_file(h5)
        cases = [
            ("plot_traffic_vs_block.py", []),
            ("plot_scaling.py", []),
            ("plot_occupancy_heatmap.py", ["--x", "block_n", "--y", "seq_q", "--select", "kernel=flash2"]),
            ("plot_roofline.py", []),
            ("plot_timeline.py", ["--point", "1"]),
            ("plot_kernel_breakdown.py", ["--scale", "4", "--reference", "published=1.0"]),
            ("plot_occupancy_heatmap.py", ["--x", "block_n", "--y", "seq_q", "--metric", "time"]),
        ]
        for script, extra in cases:
            for ext in (".png", ".svg"):
                out = os.path.join(tmp, f"{script.replace('.py', '')}_{len(extra)}{ext}")
                proc = run(script, [h5, out] + extra)
                try:
                    if proc.returncode != 0:
                        raise AssertionError(f"exit {proc.returncode}: {proc.stderr.strip()[-600:]}")
                    check_figure(out)
                    print(f"ok   {script} -> {ext}")
                except AssertionError as e:
                    failures += 1
                    print(f"FAIL {script} -> {ext}: {e}")

        # summarize.py: one line per point and the counts this file was built with.
        proc = run("summarize.py", [h5])
        want = f"{total} points: {total - N_IMPOSSIBLE - N_ERROR} ok, {N_IMPOSSIBLE} impossible, {N_ERROR} error"
        lines = proc.stdout.splitlines()
        if proc.returncode != 0 or want not in proc.stdout or len(lines) != total + 3:
            failures += 1
            print(f"FAIL summarize.py: expected '{want}' and {total} point lines, got rc {proc.returncode}:\n"
                  f"{proc.stdout}{proc.stderr}")
        elif "exceeds the device limit" not in proc.stdout:
            failures += 1
            print("FAIL summarize.py: the impossible point's reason is not shown")
        else:
            print("ok   summarize.py counts and reasons")

        # Bad input is rejected with a non-zero status, not a traceback-free empty figure.
        bad = run("plot_roofline.py", [h5, os.path.join(tmp, "x.gif")])
        missing = run("summarize.py", [os.path.join(tmp, "missing.h5")])
        if bad.returncode == 0 or missing.returncode == 0:
            failures += 1
            print(f"FAIL bad input accepted: .gif rc {bad.returncode}, missing file rc {missing.returncode}")
        else:
            print("ok   bad output extension and missing file rejected")
        failures += check_real_file(tmp)
    print(f"test_figures: {failures} failure(s)")
    return 1 if failures else 0


def test_figures():
    assert run_checks() == 0, "failed checks: the FAIL lines in the captured output"


if __name__ == "__main__":
    sys.exit(1 if run_checks() else 0)
