#!/usr/bin/python3
"""Figure of the online-softmax step-through (`attnsim softmax-trace --json`).

Three panels: the scores by block with the running max m after each block; the running sum
l and the rescale factor exp(m_old - m_new) per block; the final online softmax beside the
direct one. Greyscale-readable (hatches and markers, not colours only).

usage:
  plot_softmax_trace.py --input trace.json --out fig.png
  plot_softmax_trace.py --scores 1,3,2,5,4,0,6,2 --block 4 --out fig.svg   # runs $ATTNSIM or --attnsim
The output format follows the extension: .png, .svg or .pdf. Runs under /usr/bin/python3.
"""
import argparse
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnsim_results as ar  # noqa: E402  (write_output: docs/output-paths.md)

FORMATS = (".png", ".svg", ".pdf")
HATCHES = ("///", "...", "\\\\\\", "xx", "++", "oo")


def load_trace(args):
    if args.input:
        with open(args.input, encoding="utf-8") as f:
            return json.load(f)
    binary = args.attnsim or os.environ.get("ATTNSIM")
    if not binary:
        raise SystemExit("error: give --input FILE, or --scores/--block with --attnsim or $ATTNSIM")
    cmd = [binary, "softmax-trace", "--scores=" + args.scores, "--block=" + str(args.block), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit("error: %s exited %d: %s" % (" ".join(cmd), proc.returncode, proc.stderr.strip()))
    return json.loads(proc.stdout)


def check_trace(trace):
    for key in ("block", "blocks", "softmax", "direct_softmax", "max_abs_difference"):
        if key not in trace:
            raise SystemExit("error: trace has no '%s' key (is it softmax-trace --json output?)" % key)
    if not trace["blocks"]:
        raise SystemExit("error: trace has no blocks")


def plot(trace, out_path):
    blocks = trace["blocks"]
    fig, (ax_s, ax_l, ax_p) = plt.subplots(3, 1, figsize=(7.5, 9.0), constrained_layout=True)
    fig.suptitle("Online softmax, %d scores in blocks of %d" % (len(trace["softmax"]), trace["block"]))

    # Panel 1: scores by block, running max after each block.
    pos = 0
    block_ends = []
    for b in blocks:
        xs = list(range(pos + 1, pos + len(b["scores"]) + 1))
        hatch = HATCHES[(b["index"] - 1) % len(HATCHES)]
        ax_s.bar(xs, b["scores"], color="0.85", edgecolor="black", hatch=hatch,
                 label="block %d scores" % b["index"])
        ax_s.hlines(b["m"], xs[0] - 0.4, xs[-1] + 0.4, colors="black", linewidth=2)
        ax_s.plot([xs[-1] + 0.4], [b["m"]], marker="v", color="black", linestyle="none")
        pos += len(b["scores"])
        block_ends.append(pos + 0.5)
    ax_s.plot([], [], color="black", marker="v", linewidth=2, label="running max m after block")
    for x in block_ends[:-1]:
        ax_s.axvline(x, color="0.4", linestyle="--", linewidth=1)
    ax_s.set_xlabel("score index j")
    ax_s.set_ylabel("score")
    ax_s.set_title("Scores seen, block by block")
    top = max(max(b["scores"]) for b in blocks)
    ax_s.set_ylim(top=top + 0.45 * (abs(top) or 1.0))  # room for the legend above the bars and the max lines
    ax_s.legend(fontsize="small", loc="upper left", ncol=3)

    # Panel 2: running sum l and rescale factor per block.
    idx = [b["index"] for b in blocks]
    ax_l.plot(idx, [b["l"] for b in blocks], color="black", marker="s", linestyle="-",
              label="running sum l = sum exp(score - m)")
    res_idx = [b["index"] for b in blocks if b.get("rescale") is not None]
    res_val = [b["rescale"] for b in blocks if b.get("rescale") is not None]
    ax_l.plot(res_idx, res_val, color="0.45", marker="^", linestyle="--",
              label="rescale exp(m_old - m_new)")
    for b in blocks:
        ax_l.annotate("m=%.4g\nl=%.4f" % (b["m"], b["l"]), (b["index"], b["l"]),
                      textcoords="offset points", xytext=(6, 6), fontsize="x-small")
    ax_l.set_xticks(idx)
    ax_l.margins(x=0.15)
    ax_l.set_ylim(0, 1.2 * max([b["l"] for b in blocks] + res_val))
    ax_l.set_xlabel("block")
    ax_l.set_ylabel("value")
    ax_l.set_title("Running sum and rescale factor")
    ax_l.legend(fontsize="small", loc="best")

    # Panel 3: final softmax, online vs direct.
    js = list(range(1, len(trace["softmax"]) + 1))
    ax_p.bar(js, trace["softmax"], color="0.8", edgecolor="black", hatch="//", label="online softmax")
    ax_p.plot(js, trace["direct_softmax"], color="black", marker="x", linestyle="none", markersize=9,
              label="direct softmax")
    ax_p.set_xlabel("score index j")
    ax_p.set_ylabel("probability")
    ax_p.set_title("Final softmax (max |online - direct| = %.3g)" % trace["max_abs_difference"])
    ax_p.legend(fontsize="small", loc="best")

    ar.savefig(fig, out_path, fmt=os.path.splitext(out_path)[1].lower().lstrip("."))
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", help="JSON from `attnsim softmax-trace --json`")
    parser.add_argument("--attnsim", help="attnsim binary (default: $ATTNSIM)")
    parser.add_argument("--scores", default="1,3,2,5,4,0,6,2", help="scores when running attnsim")
    parser.add_argument("--block", type=int, default=4, help="block size when running attnsim")
    parser.add_argument("--out", required=True, help="output figure: .png, .svg or .pdf")
    args = parser.parse_args(argv)
    ext = os.path.splitext(args.out)[1].lower()
    if ext not in FORMATS:
        raise SystemExit("error: --out must end in one of %s, got '%s'" % (", ".join(FORMATS), args.out))
    trace = load_trace(args)
    check_trace(trace)
    plot(trace, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
