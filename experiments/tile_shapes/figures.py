#!/usr/bin/python3
"""All of tile_shapes' figures and ranking.txt in one Python process (figures.sh calls it):
imports matplotlib and h5py once instead of once per figure, which was most of the quick
variant's figure time.

    /usr/bin/python3 experiments/tile_shapes/figures.py RESULTS.h5 OUTDIR
"""
import contextlib
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)
import attnsim_results as ar  # noqa: E402
import best  # noqa: E402
import plot_occupancy_heatmap  # noqa: E402
import plot_timeline  # noqa: E402


def main(argv=None):
    h5, out = (sys.argv[1:] if argv is None else argv)[:2]
    os.makedirs(out, exist_ok=True)
    figures = [
        ("occupancy_tiles.png", ["--x", "block_n", "--y", "block_m", "--select", "stages=2", "--select", "warps=4"]),
        ("occupancy_stages_warps.png", ["--x", "warps", "--y", "stages", "--select", "block_m=128",
                                        "--select", "block_n=128"]),
        ("time_tiles.png", ["--x", "block_n", "--y", "block_m", "--metric", "time", "--select", "stages=2",
                            "--select", "warps=4"]),
    ]
    for name, args in figures:
        plot_occupancy_heatmap.main([h5, os.path.join(out, name)] + args)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        best.main([h5])
    sys.stdout.write(text.getvalue())
    ar.write_output(os.path.join(out, "ranking.txt"), text.getvalue().encode())
    res = ar.Results(h5)
    point = best.fastest_point(res)
    res.close()
    plot_timeline.main([h5, os.path.join(out, "timeline_best.png"), "--point", str(point)])
    for name in [f for f, _ in figures] + ["timeline_best.png"]:
        print(os.path.join(out, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
