#!/usr/bin/python3
"""Compares sim.mode: sampled against full: runs `attnsim run ... --json` in both modes on each
workload (one per line of `attnsim run` arguments; # starts a comment) and prints per workload the
relative error of the run's time, DRAM bytes and L2 bytes, the largest time error of one of its
kernels (launches; errors of a run's kernels can cancel in its total), the sampled fraction, the
estimated error and the CPU seconds (user + sys of the child) of each mode, then the medians and
worst cases over all workloads and, where some ran in full in sampled mode too (their errors are
0), over the sampled ones alone. The JSON rows and a summary line also give the errors of the DRAM
and L2 busy cycles (attnsim__dram_busy_cycles, attnsim__l2_busy_cycles: the busy % and the
`bound by` line), and of the L2 far hits (attnsim__l2_far_hits: reads served by the other L2
partition, which rise where sampled mode places a head's CTAs across both partitions more evenly
than full mode does; docs/sampling.md, known limits), where both runs report them. The "wave %"
column splits the time error: it is the error of the run's time less its tail (time x (1 -
attnsim__tail_pct / 100), the median end of each launch's last wave), so that a time error the
wave column does not share lies in the two runs' last CTAs (stragglers, whose ends the full
simulation's own dynamics move: --jitter).

Usage: scripts/sampled_vs_full.py [--binary build/attnsim] [--json OUT] [--reuse-full PREV.json] [--jitter K] LIST...
--reuse-full: take the full runs' metrics and CPU seconds of workloads found in an earlier --json
output instead of running them again (full results are deterministic; say so when quoting CPU).
--jitter K: for each workload that sampled mode did not run in full, run full mode K more times
with the device clock moved by 1e-7 of itself per run (+1, -1, +2, -2, ... steps; times scaled
back to the unmoved clock) and print how far these full runs spread (max - min over their median)
and the sampled time's and DRAM bytes' errors against their medians: where the full simulation
itself moves by percents under a perturbation that small, the error against one full run is
partly its noise.
Exit 0 when every workload ran; 1 when a run failed."""
import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys


def run(binary, args, mode):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([binary, "run", *args, "--set", f"sim.mode={mode}", "--json"], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        raise RuntimeError(f"{mode}: rc={p.returncode}: {p.stderr.strip().splitlines()[:1]}")
    out = json.loads(p.stdout)
    return out["metrics"], [k["metrics"]["gpu__time_duration.sum"] for k in out["kernels"]], cpu, out["device"]


def dram_bytes(m):
    return m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]


KEPT = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
        "attnsim__dram_busy_cycles", "attnsim__l2_busy_cycles", "attnsim__l2_far_hits",
        "attnsim__tail_pct")  # a JSON row's metrics
# Errors a row has where both runs report the metric (absent from full runs of older files).
PAIRED = {"dram_busy_err": "attnsim__dram_busy_cycles", "l2_busy_err": "attnsim__l2_busy_cycles",
        "far_hits_err": "attnsim__l2_far_hits"}


def jittered_full_runs(binary, args, clock, k):
    """Full-mode times and DRAM bytes of k runs with the clock moved by +1, -1, +2, -2, ... x 1e-7
    of itself; times scaled back to `clock` (a cycle count is the same at both clocks only when
    nothing is chaotic)."""
    times, drams = [], []
    for i in range(1, k + 1):
        step = (i + 1) // 2 * (1 if i % 2 else -1)
        c = clock * (1 + step * 1e-7)
        m, _, _, _ = run(binary, [*args, "--set", f"device.clock_ghz={c!r}"], "full")
        times.append(m["gpu__time_duration.sum"] * c / clock)
        drams.append(dram_bytes(m))
    return times, drams


def wave_time(m):
    """The time less its tail: the median end of the last wave, summed over launches."""
    return m["gpu__time_duration.sum"] * (1 - m["attnsim__tail_pct"] / 100)


def rel(a, b):
    return (a - b) / b if b else (0.0 if a == b else float("inf"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/attnsim")
    ap.add_argument("--json", help="write the rows as JSON here")
    ap.add_argument("--reuse-full", help="an earlier --json output: reuse its full runs")
    ap.add_argument("--jitter", type=int, default=0, metavar="K",
                    help="K perturbed full runs per sampled workload: the full simulation's own spread")
    ap.add_argument("lists", nargs="+")
    a = ap.parse_args()
    lines = []
    for path in a.lists:
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    lines.append(line)
    reuse = {}
    if a.reuse_full:
        with open(a.reuse_full) as f:
            reuse = {r["workload"]: r for r in json.load(f)}
    rows, failed = [], 0
    print(f"{'time err %':>10} {'wave %':>7} {'kernel %':>10} {'DRAM err %':>10} {'L2 err %':>9} {'sampled %':>9} {'est. %':>7} {'full s':>7} {'samp s':>7} {'speed-up':>8}  workload")
    for line in lines:
        args = shlex.split(line)
        try:
            if line in reuse:
                full, cpu_f = dict(reuse[line]["full"]), reuse[line]["cpu_full_s"]
                kern_f = reuse[line].get("kernel_times_full")  # absent in files written before it
            else:
                full, kern_f, cpu_f, _ = run(a.binary, args, "full")
            samp, kern_s, cpu_s, device = run(a.binary, args, "sampled")
            sampled_fraction = samp.get("attnsim__sampled_fraction", 1.0)
            jitter, jitter_dram = [], []
            if a.jitter > 0 and sampled_fraction < 1:
                jitter, jitter_dram = jittered_full_runs(a.binary, args, device["clock_ghz"], a.jitter)
        except RuntimeError as e:
            print(f"FAILED {e}: {line}")
            failed += 1
            continue
        kern = [rel(x, y) for x, y in zip(kern_s, kern_f)] if kern_f and len(kern_f) == len(kern_s) else []
        r = {
            "workload": line,
            "time_err": rel(samp["gpu__time_duration.sum"], full["gpu__time_duration.sum"]),
            "kernel_time_errs": kern,
            "kernel_times_full": kern_f,
            "kernel_times_sampled": kern_s,
            "dram_err": rel(dram_bytes(samp), dram_bytes(full)),
            "l2_err": rel(samp["lts__t_bytes.sum"], full["lts__t_bytes.sum"]),
            "sampled_fraction": sampled_fraction,
            "estimated_err_pct": samp.get("attnsim__sampling_error_pct", 0.0),
            "cpu_full_s": cpu_f,
            "cpu_sampled_s": cpu_s,
            "full": {k: full[k] for k in KEPT if k in full},
            "sampled": {k: samp[k] for k in KEPT if k in samp},
        }
        for name, metric in PAIRED.items():  # absent from the full runs of files written before them
            if metric in full and metric in samp:
                r[name] = rel(samp[metric], full[metric])
        if "attnsim__tail_pct" in full and "attnsim__tail_pct" in samp:
            r["wave_err"] = rel(wave_time(samp), wave_time(full))
        if jitter:
            fulls = [full["gpu__time_duration.sum"], *jitter]
            mid = statistics.median(fulls)
            r["full_times_jittered"] = jitter
            r["full_spread"] = (max(fulls) - min(fulls)) / mid
            r["time_err_vs_median_full"] = rel(samp["gpu__time_duration.sum"], mid)
            drams = [dram_bytes(full), *jitter_dram]
            dmid = statistics.median(drams)
            r["full_dram_jittered"] = jitter_dram
            r["full_dram_spread"] = (max(drams) - min(drams)) / dmid if dmid else 0.0
            r["dram_err_vs_median_full"] = rel(dram_bytes(samp), dmid)
        rows.append(r)
        worst_kern = f"{100 * max(kern, key=abs):10.3f}" if kern else f"{'-':>10}"
        wave = f"{100 * r['wave_err']:7.3f}" if "wave_err" in r else f"{'-':>7}"
        print(f"{100 * r['time_err']:10.3f} {wave} {worst_kern} {100 * r['dram_err']:10.3f} {100 * r['l2_err']:9.3f} "
              f"{100 * r['sampled_fraction']:9.2f} {r['estimated_err_pct']:7.2f} {cpu_f:7.2f} {cpu_s:7.2f} "
              f"{cpu_f / max(cpu_s, 1e-9):8.1f}  {line}", flush=True)
        if jitter:
            print(f"{'':>10} full runs spread {100 * r['full_spread']:.3f} % (max - min of {len(jitter) + 1}); "
                  f"sampled against their median {100 * r['time_err_vs_median_full']:.3f} %; DRAM bytes spread "
                  f"{100 * r['full_dram_spread']:.3f} %, sampled against their median "
                  f"{100 * r['dram_err_vs_median_full']:.3f} %", flush=True)
    if rows:
        t = [abs(r["time_err"]) for r in rows]
        d = [abs(r["dram_err"]) for r in rows]
        l2 = [abs(r["l2_err"]) for r in rows]
        print(f"{len(rows)} workloads: |time err| median {100 * statistics.median(t):.3f} %, worst {100 * max(t):.3f} %; "
              f"|DRAM err| worst {100 * max(d):.3f} %; |L2 err| worst {100 * max(l2):.3f} %; "
              f"CPU full {sum(r['cpu_full_s'] for r in rows):.1f} s, sampled {sum(r['cpu_sampled_s'] for r in rows):.1f} s")
        b = [r for r in rows if "dram_busy_err" in r and "l2_busy_err" in r]
        if b:
            db = [abs(r["dram_busy_err"]) for r in b]
            lb = [abs(r["l2_busy_err"]) for r in b]
            print(f"busy cycles ({len(b)} workloads): |DRAM err| median {100 * statistics.median(db):.3f} %, worst "
                  f"{100 * max(db):.3f} %; |L2 err| median {100 * statistics.median(lb):.3f} %, worst {100 * max(lb):.3f} %")
        fh = [r["far_hits_err"] for r in rows if "far_hits_err" in r and r["sampled_fraction"] < 1]
        if fh:
            print(f"L2 far hits ({len(fh)} sampled workloads): err median {100 * statistics.median(fh):+.3f} %, "
                  f"|err| worst {100 * max(fh, key=abs):+.3f} %")
        w = [r for r in rows if "wave_err" in r]
        if w:
            we = [abs(r["wave_err"]) for r in w]
            print(f"the time less its tail ({len(w)} workloads; the median end of each launch's last wave): |err| median "
                  f"{100 * statistics.median(we):.3f} %, worst {100 * max(we):.3f} %")
        k = [abs(e) for r in rows for e in r["kernel_time_errs"]]
        if k:
            print(f"{len(k)} kernels of {sum(1 for r in rows if r['kernel_time_errs'])} workloads: |time err| median "
                  f"{100 * statistics.median(k):.3f} %, worst {100 * max(k):.3f} %")
        # The rows sampled mode did not simulate in full: the lines above count the others as 0.
        s = [r for r in rows if r["sampled_fraction"] < 1]
        if s and len(s) < len(rows):
            ts = [abs(r["time_err"]) for r in s]
            ks = [abs(e) for r in s for e in r["kernel_time_errs"]] or [0.0]
            print(f"{len(s)} sampled workloads (the others ran in full): |time err| median "
                  f"{100 * statistics.median(ts):.3f} %, worst {100 * max(ts):.3f} %; their kernels median "
                  f"{100 * statistics.median(ks):.3f} %, worst {100 * max(ks):.3f} %; "
                  f"|DRAM err| worst {100 * max(abs(r['dram_err']) for r in s):.3f} %")
        j = [r for r in rows if "full_spread" in r]
        if j:
            sp = [r["full_spread"] for r in j]
            em = [abs(r["time_err_vs_median_full"]) for r in j]
            dsp = [r["full_dram_spread"] for r in j]
            dem = [abs(r["dram_err_vs_median_full"]) for r in j]
            print(f"jitter ({a.jitter} perturbed full runs each, {len(j)} sampled workloads): full-run spread median "
                  f"{100 * statistics.median(sp):.3f} %, worst {100 * max(sp):.3f} %; |sampled - median full| median "
                  f"{100 * statistics.median(em):.3f} %, worst {100 * max(em):.3f} %; DRAM bytes: spread worst "
                  f"{100 * max(dsp):.3f} %, |sampled - median full| worst {100 * max(dem):.3f} %")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
