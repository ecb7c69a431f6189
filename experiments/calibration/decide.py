#!/usr/bin/python3
"""Read a device_run.sh output folder and say what each measurement decides for a device preset.

Usage: experiments/calibration/decide.py DIR [--device h200] [--json]

DIR holds what experiments/calibration/device_run.sh wrote (files that are missing are reported
as not measured). For each question of experiments/calibration/README.md it prints the reading
and the decision; the microbenchmark set itself (pointer chase, stream, copy) is checked by
scripts/calibrate.py --measured DIR/microbench.json.

Overlap of two kinds of work A and B measured alone and together: f = (A + B - both) / (A + B -
max(A, B)), clamped to [0, 1]; 1 = they overlap fully (both = the longer alone), 0 = they run one
after the other (both = the sum). f >= 0.75 reads as "overlap", f <= 0.25 as "serial", between as
"partial" (neither setting of the key describes it: report the fraction, change nothing).

Decisions (the keys: configs/devices/README.md; why they matter: docs/accuracy.md §5, §6):
- async_copy_issue: f of the largest copy beside each FFMA count, and whether the issue time grows
  with the copies: overlap and small issue -> sm.queue_async_copies: true; serial -> false (default).
- mma_sync_rate: the mma.sync FLOP per cycle per SM (mma4 / mma8, the larger) against
  sm.mma.mma_sync.flops_per_cycle; f of mma4 beside math4 (`mix`): serial -> the FP32 work holds
  the tensor pipe in mma.sync kernels (sm.fp32_holds_tensor), overlap -> the presets.
- wgmma_sfu (sm_90): f of two warp groups' wgmma chains beside ex2 (`both`) -> sm.sfu_holds_tensor
  (true where serial); beside FFMA (`both_fma`) -> sm.fp32_holds_tensor.
- sm_clock: the SM clock under each load against the preset's clock_ghz; a sustained issue- or
  tensor-heavy clock more than 5 % below it is a missing mechanism (docs/accuracy.md, Open items).
- smem_fill: the shared reads' slowdown beside cp.async copies against copied bytes / 128 (the
  banks' cycles the copies' writes would take): >= 0.75 of it -> sm.async_fills_take_banks: true;
  <= 0.25 -> false (default); between: undecided.
- softmax_phases: the warp softmax's whole-kernel time against kernels.csv's rows (54.7 and 293.9
  us at N 1024 and 2048) and its phase cycles (informative; no key).
The last line gives the decided keys as `--set device.KEY=VALUE` options for `attnsim run` /
`sweep` and scripts/compare_paper.py (`settings` in --json); a key two readings disagree on is left out.
Exit codes: 0 read (whatever it decides), 2 bad arguments or an unreadable file.
"""
import argparse
import json
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# kernels.csv's softmax_warp_forward rows (B1 H32 d128, N 1024 and 2048), microseconds.
REFERENCE_SOFTMAX_US = {1024: 54.688, 2048: 293.920}


def overlap(a, b, both):
    """Fraction in [0, 1]: 1 when `both` is the longer of a and b alone, 0 when it is their sum."""
    hi, total = max(a, b), a + b
    if total <= hi:  # one of them is zero: nothing to overlap
        return None
    return min(1.0, max(0.0, (total - both) / (total - hi)))


def verdict(f):
    if f is None:
        return "not measurable"
    return "overlap" if f >= 0.75 else "serial" if f <= 0.25 else "partial"


def fail(message):
    print(f"decide.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def load(path):
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def preset(device):
    path = device if os.path.exists(device) else os.path.join(ROOT, "configs", "devices", device + ".yaml")
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        fail(f"--device {device}: {e}")


def async_copies(data):
    points = {(p["copy_bytes_per_cta"], p["ffma_per_thread"]): p for p in data["points"]}
    copies = sorted({k for k, _ in points})
    ffmas = sorted({f for _, f in points if f > 0})
    big, small = copies[-1], next((k for k in copies if k > 0), copies[-1])
    rows = []
    for f in ffmas:
        alone_c = points[(big, 0)]["done_cycles"]
        alone_f = points[(0, f)]["done_cycles"] if (0, f) in points else points[(big, f)]["compute_cycles"]
        both = points[(big, f)]["done_cycles"]
        frac = overlap(alone_c, alone_f, both)
        issue_small, issue_big = points[(small, f)]["issue_cycles"], points[(big, f)]["issue_cycles"]
        rows.append({"ffma_per_thread": f, "copies_alone": alone_c, "ffma_alone": alone_f, "both": both,
                     "overlap": frac, "issue_cycles": [issue_small, issue_big]})
    fracs = [r["overlap"] for r in rows if r["overlap"] is not None]
    issue_grows = any(r["issue_cycles"][1] > 0.25 * r["copies_alone"] for r in rows)
    f = min(fracs) if fracs else None
    if f is None:
        key = None
    elif verdict(f) == "overlap" and not issue_grows:
        key = True
    elif verdict(f) == "serial" or issue_grows:
        key = False
    else:
        key = None
    return {"copy_bytes_per_cta": big, "rows": rows, "overlap": f, "issue_grows": issue_grows,
            "sm.queue_async_copies": key}


def mma_sync(data, spec):
    modes = data["modes"]
    rate = max(modes[m]["tensor_flop_per_cycle_per_sm"] for m in ("mma4", "mma8") if m in modes)
    preset_rate = spec["sm"]["mma"]["mma_sync"]["flops_per_cycle"]
    f = overlap(modes["mma4"]["max_cycles"], modes["math4"]["max_cycles"], modes["mix"]["max_cycles"])
    return {"flops_per_cycle": rate, "preset_flops_per_cycle": preset_rate,
            "ratio_to_preset": rate / preset_rate, "overlap_with_math": f, "verdict": verdict(f)}


def wgmma(data):
    modes = data["modes"]

    def chains(mode, groups):
        return max(modes[mode]["cycles_wg"][g] for g in groups)

    out = {}
    for other, both, key in (("ex2", "both", "sm.sfu_holds_tensor"), ("fma", "both_fma", "sm.fp32_holds_tensor")):
        f = overlap(chains("mma2", (0, 1)), chains(other, (2,)), chains(both, (0, 1, 2)))
        out[other] = {"mma2": chains("mma2", (0, 1)), other: chains(other, (2,)), "both": chains(both, (0, 1, 2)),
                      "overlap": f, "verdict": verdict(f),
                      key: None if verdict(f) in ("partial", "not measurable") else verdict(f) == "serial"}
    return out


def sm_clock(data, spec):
    preset_mhz = 1000.0 * spec["clock_ghz"]
    loads = {}
    for name, load_ in data["loads"].items():
        row = {}
        for when in ("short", "sustained"):
            if load_.get(when):
                row[when] = load_[when]["median_mhz"]
                row[when + "_ratio"] = load_[when]["median_mhz"] / preset_mhz
        loads[name] = row
    low = sorted(n for n in ("issue", "mma", "mma_math") if loads.get(n, {}).get("sustained_ratio", 1.0) < 0.95)
    return {"preset_mhz": preset_mhz, "driver_mhz": data.get("clock_rate_mhz"), "loads": loads,
            "lower_under_load": low}


def smem_fill(data, wavefront_bytes=128):
    alone, beside = data["read_cycles_alone"], data["read_cycles_beside_copies"]
    predicted = data["copied_bytes_per_cta"] / wavefront_bytes  # cycles, were every fill byte a bank's
    share = (beside - alone) / predicted if predicted > 0 else None
    key = None if share is None or 0.25 < share < 0.75 else share >= 0.75
    return {"read_cycles_alone": alone, "read_cycles_beside_copies": beside,
            "copied_bytes_per_cta": data["copied_bytes_per_cta"], "bank_cycles_of_copies": predicted,
            "share_of_bank_cycles": share, "sm.async_fills_take_banks": key}


def softmax(data):
    out = []
    for c in data["cases"]:
        row = {"variant": c["variant"], "cols": c["cols"], "us": c["us"]}
        ref = REFERENCE_SOFTMAX_US.get(c["cols"])
        if c["variant"] == "untimed" and ref:
            row["against_kernels_csv"] = c["us"] / ref - 1
        if c["variant"] != "untimed":
            row["warp_cycles"] = c["warp_cycles"]
        out.append(row)
    return out


def settings(r):
    """The opt-in keys the readings decide, {key: bool}; undecided or disagreeing ones left out."""
    votes = {}
    for name in ("async_copy_issue_1cta", "async_copy_issue_per_sm"):
        if r.get(name):
            votes.setdefault("sm.queue_async_copies", []).append(r[name]["sm.queue_async_copies"])
    if r.get("wgmma_sfu"):
        votes["sm.sfu_holds_tensor"] = [r["wgmma_sfu"]["ex2"]["sm.sfu_holds_tensor"]]
        votes["sm.fp32_holds_tensor"] = [r["wgmma_sfu"]["fma"]["sm.fp32_holds_tensor"]]
    if r.get("smem_fill"):
        votes["sm.async_fills_take_banks"] = [r["smem_fill"]["sm.async_fills_take_banks"]]
    return {k: v[0] for k, v in votes.items() if None not in v and len(set(v)) == 1}


def decide(folder, device):
    spec = preset(device)
    readers = {"async_copy_issue_1cta": async_copies, "async_copy_issue_per_sm": async_copies,
               "mma_sync_rate": lambda d: mma_sync(d, spec), "wgmma_sfu": wgmma,
               "sm_clock": lambda d: sm_clock(d, spec), "smem_fill": smem_fill, "softmax_phases": softmax}
    result = {"device": device, "folder": folder}
    for name, read in readers.items():
        path = os.path.join(folder, name + ".json")
        d = load(path)
        try:
            result[name] = read(d) if d else None
        except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as e:
            fail(f"{path}: not the layout its benchmark prints ({e!r})")
    result["settings"] = settings(result)
    return result


def pct(x):
    return "-" if x is None else f"{100 * x:.0f} %"


def report(r):
    lines = [f"decisions for the {r['device']} preset from {r['folder']}"]
    for name in ("async_copy_issue_1cta", "async_copy_issue_per_sm"):
        a = r[name]
        if not a:
            lines.append(f"{name}: not measured")
            continue
        lines.append(f"{name}: copies of {a['copy_bytes_per_cta']} B per CTA beside FFMAs, overlap {pct(a['overlap'])}"
                     f"{', issue time grows with the copies' if a['issue_grows'] else ''} -> "
                     f"sm.queue_async_copies: {decision(a['sm.queue_async_copies'])}")
    m = r["mma_sync_rate"]
    if m:
        lines.append(f"mma_sync_rate: {m['flops_per_cycle']:.0f} FLOP/cycle/SM ({m['ratio_to_preset']:.2f} x the preset's "
                     f"{m['preset_flops_per_cycle']}); beside FP32/MUFU math: {verdict(m['overlap_with_math'])} "
                     f"({pct(m['overlap_with_math'])})")
    else:
        lines.append("mma_sync_rate: not measured")
    w = r["wgmma_sfu"]
    if w:
        for other, key in (("ex2", "sm.sfu_holds_tensor"), ("fma", "sm.fp32_holds_tensor")):
            lines.append(f"wgmma_sfu: wgmma beside {other}: {w[other]['verdict']} ({pct(w[other]['overlap'])}) -> "
                         f"{key}: {decision(w[other][key])}")
    else:
        lines.append("wgmma_sfu: not measured")
    c = r["sm_clock"]
    if c:
        parts = [f"{n} {v.get('sustained', 0):.0f}" for n, v in c["loads"].items()]
        lines.append(f"sm_clock: sustained MHz {', '.join(parts)} against the preset's {c['preset_mhz']:.0f}; "
                     + (f"lower under load: {', '.join(c['lower_under_load'])}" if c["lower_under_load"]
                        else "within 5 % under every load"))
    else:
        lines.append("sm_clock: not measured")
    f = r["smem_fill"]
    if f:
        lines.append(f"smem_fill: shared reads {f['read_cycles_alone']} cycles alone, {f['read_cycles_beside_copies']} "
                     f"beside {f['copied_bytes_per_cta']} B of cp.async copies ({pct(f['share_of_bank_cycles'])} of "
                     f"their {f['bank_cycles_of_copies']:.0f} bank cycles) -> sm.async_fills_take_banks: "
                     f"{decision(f['sm.async_fills_take_banks'])}")
    else:
        lines.append("smem_fill: not measured")
    s = r["softmax_phases"]
    if s:
        for row in s:
            if "against_kernels_csv" in row:
                lines.append(f"softmax_phases: N {row['cols']} {row['us']:.1f} us, "
                             f"{100 * row['against_kernels_csv']:+.1f} % against kernels.csv")
    else:
        lines.append("softmax_phases: not measured")
    s = r["settings"]
    lines.append("as measured: " + (" ".join(f"--set device.{k}={str(v).lower()}" for k, v in s.items())
                                    if s else "no key decided"))
    return "\n".join(lines)


def decision(key):
    return "undecided (partial: change nothing)" if key is None else str(key).lower()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", help="device_run.sh's output folder")
    p.add_argument("--device", default="h200", help="preset name or YAML path (default h200)")
    p.add_argument("--json", action="store_true", help="print the readings and decisions as JSON")
    a = p.parse_args(argv)
    if not os.path.isdir(a.folder):
        fail(f"{a.folder}: not a folder")
    r = decide(a.folder, a.device)
    print(json.dumps(r, indent=1) if a.json else report(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
