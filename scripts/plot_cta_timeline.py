#!/usr/bin/python3
"""Figure of CTA op timelines (`attnsim run --trace FILE.tsv`): where a CTA's time goes.

For each traced CTA and warp group, three lanes of bars over a window of loop steps: memory
(loads and stores, from the cycle the group reached the op to the cycle it went on, then a light
bar to the cycle an async load's data was in), compute (MMAs, shared-memory operand reads,
exponentials, FP32 and other instructions; an async wgmma as a thin bar from its issue to its
commit group's completion; in sampled runs the skipped steps and CTAs) and waits (async-group waits, barriers, mbarrier and
named-barrier waits). Greyscale-readable (hatches, not colours only).

usage:
  plot_cta_timeline.py TRACE.tsv OUT.png [--launch 0] [--cta N ...] [--steps 1:4] [--cycles] [--title T]
TRACE.tsv is `attnsim run ... --trace TRACE.tsv` (docs/cli.md, "Op timelines") or, from Python,
attnsim.plot.cta_timeline(attnsim.cta_timeline(...), "out.png"). --steps A:B draws loop steps A
to B inclusive (default: all of them up to 6 steps, else 1:4). The output format follows the
extension: .png, .svg or .pdf. Runs under /usr/bin/python3.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnsim_results as ar  # noqa: E402  (savefig, register_frame's frames)

COLUMNS = ("launch", "kernel", "cta", "group", "step", "kind", "start_cycles", "end_cycles", "ready_cycles")
LANES = ("memory", "compute", "wait")
# kind -> (lane, legend label, face grey, hatch)
STYLE = {
    "load": ("memory", "global load (held: load credits)", "0.55", "///"),
    "store": ("memory", "global store", "0.75", "\\\\\\"),
    "mma": ("compute", "MMA", "0.15", ""),
    "shared_read": ("compute", "shared-memory operands", "0.85", "..."),
    "shared_write": ("compute", "shared-memory operands", "0.85", "..."),
    "exp": ("compute", "exponentials (SFU)", "0.6", "xx"),
    "elementwise": ("compute", "FP32 / issued instructions", "0.95", "++"),
    "issue": ("compute", "FP32 / issued instructions", "0.95", "++"),
    "wait": ("wait", "waits and barriers", "0.9", ""),
    "barrier": ("wait", "waits and barriers", "0.9", ""),
    "mma_wait": ("wait", "waits and barriers", "0.9", ""),
    "mbar_wait": ("wait", "waits and barriers", "0.9", ""),
    "named_sync": ("wait", "waits and barriers", "0.9", ""),
    "skipped_step": ("compute", "skipped by sim.mode: sampled", "1.0", "oo"),
    "skipped_cta": ("compute", "skipped by sim.mode: sampled", "1.0", "oo"),
}
IN_FLIGHT = ("async data in flight", "0.97", "")
ASYNC_MMA = ("async MMA (wgmma), issued to done", "0.3", "")


def read_trace(source):
    frame = ar._FRAMES.get(source) if isinstance(source, str) else None
    if frame is None:
        if not os.path.exists(source):
            raise SystemExit(f"error: {source}: no such file (write one with attnsim run --trace FILE.tsv)")
        try:
            frame = pd.read_csv(source, sep="\t", keep_default_na=False)
        except Exception as e:  # pandas' parser errors differ by version
            raise SystemExit(f"error: {source}: not a tab-separated trace: {e}")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise SystemExit(f"error: {source}: not an attnsim run --trace table (no column {', '.join(missing)})")
    if frame.empty:
        raise SystemExit(f"error: {source}: the trace has no ops")
    return frame


def parse_steps(text, steps):
    if text is None:
        return (int(steps.min()), int(steps.max())) if steps.max() - steps.min() < 6 else (1, 4)
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise SystemExit(f"error: --steps {text}: expected A:B, e.g. 1:4")
    if b < a:
        raise SystemExit(f"error: --steps {text}: B is before A")
    return a, b


def plot(frame, out, launch, ctas, steps, cycles, title):
    df = frame[frame.launch == launch]
    if df.empty:
        raise SystemExit(f"error: launch {launch} is not in the trace (launches: "
                         f"{', '.join(str(x) for x in sorted(set(frame.launch)))})")
    if ctas:
        absent = [c for c in ctas if c not in set(df.cta)]
        if absent:
            raise SystemExit(f"error: CTA {absent[0]} is not in the trace of launch {launch} (CTAs: "
                             f"{', '.join(str(x) for x in sorted(set(df.cta)))})")
        df = df[df.cta.isin(ctas)]
    first, last = parse_steps(steps, df.step)
    df = df[(df.step >= first) & (df.step <= last)]
    if df.empty:
        raise SystemExit(f"error: no ops in steps {first}:{last}")
    scale = 1.0 if cycles else 1e-3
    unit = "SM cycles" if cycles else "thousands of SM cycles"
    t0 = df.start_cycles.min()
    groups = sorted(set(zip(df.cta, df.group)))
    lanes = [(c, g, lane) for c, g in groups for lane in LANES]
    height = 0.6 + 0.32 * len(lanes)
    fig, ax = plt.subplots(figsize=(9.0, max(2.6, height + 1.6)), constrained_layout=True)
    seen = {}
    for y, (c, g, lane) in enumerate(lanes):
        rows = df[(df.cta == c) & (df.group == g)]
        for r in rows.itertuples():
            style = STYLE.get(r.kind)
            if style is None or style[0] != lane:
                continue
            x0, x1 = (r.start_cycles - t0) * scale, (r.end_cycles - t0) * scale
            if x1 > x0:
                h = ax.barh(y, x1 - x0, left=x0, height=0.7, color=style[2], edgecolor="black", linewidth=0.4,
                            hatch=style[3])
                seen.setdefault(style[1], h)
            if r.ready_cycles > r.end_cycles:  # async: its data (a load) or its result (an MMA) after
                x2 = (r.ready_cycles - t0) * scale
                look = IN_FLIGHT if lane == "memory" else ASYNC_MMA
                h = ax.barh(y, x2 - x1, left=x1, height=0.35, color=look[1], edgecolor="0.4", linewidth=0.4)
                seen.setdefault(look[0], h)
    # Step boundaries, from the first lane's group.
    c0, g0 = groups[0]
    starts = df[(df.cta == c0) & (df.group == g0)].groupby("step").start_cycles.min()
    for step, t in starts.items():
        x = (t - t0) * scale
        ax.axvline(x, color="0.3", linestyle=":", linewidth=0.8)
        ax.text(x, -0.75, f" step {step}", fontsize="x-small", va="center", ha="left")
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"CTA {c} g{g} {lane}" for c, g, lane in lanes], fontsize="small")
    ax.set_ylim(len(lanes) - 0.4, -1.05)  # first lane on top, the step labels above it
    ax.set_xlabel(f"time from step {first}'s start ({unit})")
    kernel = df.kernel.iloc[0]
    ax.set_title(title or f"{kernel} (launch {launch}): steps {first}-{last}", fontsize="medium")
    ax.legend(seen.values(), seen.keys(), fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.18),
              ncol=3, frameon=False)
    ar.savefig(fig, out)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", help="TSV from attnsim run --trace (or a registered DataFrame)")
    parser.add_argument("out", help="output figure: .png, .svg or .pdf")
    parser.add_argument("--launch", type=int, default=0, help="launch index (default 0)")
    parser.add_argument("--cta", type=int, action="append", help="CTA to draw (repeatable; default all traced)")
    parser.add_argument("--steps", help="loop steps A:B, inclusive (default all up to 6 steps, else 1:4)")
    parser.add_argument("--cycles", action="store_true", help="x axis in SM cycles (default thousands of cycles)")
    parser.add_argument("--title", help="figure title")
    args = parser.parse_args(argv)
    if os.path.splitext(args.out)[1].lower() not in (".png", ".svg", ".pdf"):
        raise SystemExit(f"error: {args.out}: output must end in .png, .svg or .pdf")
    plot(read_trace(args.trace), args.out, args.launch, args.cta, args.steps, args.cycles, args.title)


if __name__ == "__main__":
    main()
