#!/usr/bin/python3
"""No figure cuts off its text: attnsim_results.texts_outside finds text drawn past the figure's
edge (and fires on a deliberately oversized label), savefig refuses such a figure when
$ATTNSIM_FIGURE_CHECK is set, and every experiment's figures (from its quick sweep), plot_parity
and plot_softmax_trace pass that check.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_figure_layout.py"""
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)
os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import attnsim_results as ar  # noqa: E402

PY = "/usr/bin/python3"
ATTNSIM = os.path.abspath(os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim")))
CHECK_ENV = dict(os.environ, MPLBACKEND="Agg", ATTNSIM=ATTNSIM, ATTNSIM_FIGURE_CHECK="1")


def small_figure(ylabel="bytes (MB)", fontsize=10):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2, 4], [3, 1, 2], label="simulated")
    ax.set_xlabel("block size B_c = block_n")
    ax.set_ylabel(ylabel, fontsize=fontsize)
    ax.set_title("a title")
    ax.legend()
    fig.tight_layout()
    return fig


def test_texts_outside_finds_an_oversized_label():
    fig = small_figure()
    assert ar.texts_outside(fig) == []
    long_label = "a deliberately oversized y label " * 4
    fig = small_figure(long_label, fontsize=18)
    bad = ar.texts_outside(fig)
    assert [t.get_text() for t, _ in bad] == [long_label], bad
    y0, y1 = bad[0][1][1], bad[0][1][3]
    assert y0 < 0 and y1 > fig.bbox.height, bad  # runs past both the bottom and the top edge
    plt.close("all")


def test_texts_outside_finds_a_title_past_the_edge_without_layout():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_title("a title far wider than this small three-inch figure can show")
    bad = ar.texts_outside(fig)
    boxes = [box for t, box in bad if t is ax.title]
    assert len(boxes) == 1 and boxes[0][0] < 0 and boxes[0][2] > fig.bbox.width, bad
    plt.close("all")


def test_savefig_refuses_cut_off_text_only_when_checking():
    fig = small_figure("a deliberately oversized y label " * 4, fontsize=18)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "f.png")
        old = os.environ.pop("ATTNSIM_FIGURE_CHECK", None)
        try:
            ar.savefig(fig, out)  # unchecked: written (bbox_inches="tight" keeps the label in the PNG)
            assert os.path.getsize(out) > 1000
            os.unlink(out)
            os.environ["ATTNSIM_FIGURE_CHECK"] = "1"
            try:
                ar.savefig(fig, out)
                raise AssertionError("savefig accepted a cut-off label")
            except ar.FigureLayoutError as e:
                assert e.code == 1 and "cut off" in e.message and "oversized" in e.message, e.message
            assert not os.path.exists(out)
            ar.savefig(small_figure(), out)
            assert os.path.getsize(out) > 1000
        finally:
            os.environ.pop("ATTNSIM_FIGURE_CHECK", None)
            if old is not None:
                os.environ["ATTNSIM_FIGURE_CHECK"] = old
    plt.close("all")


def test_a_figure_script_fails_the_check_with_an_oversized_title():
    import test_figures

    with tempfile.TemporaryDirectory() as d:
        h5 = os.path.join(d, "s.h5")
        test_figures.build_file(h5)
        script = os.path.join(ROOT, "scripts", "plot_timeline.py")
        ok = subprocess.run([PY, script, h5, os.path.join(d, "ok.png"), "--point", "1"],
                            capture_output=True, text=True, env=CHECK_ENV)
        assert ok.returncode == 0, ok.stderr
        bad = subprocess.run([PY, script, h5, os.path.join(d, "bad.png"), "--point", "1", "--title", "x" * 300],
                             capture_output=True, text=True, env=CHECK_ENV)
        assert bad.returncode == 1 and "cut off" in bad.stderr, (bad.returncode, bad.stderr)
        assert not os.path.exists(os.path.join(d, "bad.png"))


def experiments_with_figures():
    return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "experiments", "*", "figures.sh")))


def test_every_experiments_quick_figures_fit():
    """Each experiment's figures.sh on its quick sweep, with the check on: exit 0 and a PNG per figure."""
    assert os.path.exists(ATTNSIM), ATTNSIM
    failures = []
    with tempfile.TemporaryDirectory() as d:
        for e in experiments_with_figures():
            name = os.path.basename(e)
            h5, out = os.path.join(d, name + ".h5"), os.path.join(d, name)
            p = subprocess.run([ATTNSIM, "sweep", os.path.join(e, "quick.yaml"), "--out", h5, "-j", "2"],
                               capture_output=True, text=True)
            assert p.returncode == 0, (name, p.stderr[-800:])
            f = subprocess.run([os.path.join(e, "figures.sh"), h5, out], capture_output=True, text=True,
                               env=dict(CHECK_ENV, ATTNSIM_QUICK="1"))
            pngs = glob.glob(os.path.join(out, "*.png"))
            print(f"{name}: rc {f.returncode}, {len(pngs)} PNG(s)")
            if f.returncode != 0 or not pngs:
                failures.append(f"{name}: rc {f.returncode}: {f.stderr[-1500:]}")
    assert not failures, "\n".join(failures)


def test_parity_and_softmax_trace_figures_fit():
    import test_plot_parity

    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "report.json")
        test_plot_parity.write_json(js)
        p = subprocess.run([PY, os.path.join(ROOT, "scripts", "plot_parity.py"), js, "--out", os.path.join(d, "p")],
                           capture_output=True, text=True, env=CHECK_ENV)
        assert p.returncode == 0, p.stderr
        assert len(glob.glob(os.path.join(d, "p", "parity_*.png"))) == 3
        if os.path.exists(ATTNSIM):
            out = os.path.join(d, "trace.png")
            p = subprocess.run([PY, os.path.join(ROOT, "scripts", "plot_softmax_trace.py"), "--out", out,
                                "--attnsim", ATTNSIM], capture_output=True, text=True, env=CHECK_ENV)
            assert p.returncode == 0, p.stderr
            assert os.path.getsize(out) > 1000


if __name__ == "__main__":
    import pytest
    sys.exit(pytest.main([__file__, "-q"]))
