"""plot_cta_timeline.py on real `attnsim run --trace` tables: PNG, SVG and PDF of flash2 (one warp
group), flash3 (producer and consumer groups) and a sampled flash2 (skipped steps) with the
figure-layout check on, the same figure
from Python (attnsim.plot.cta_timeline of attnsim.cta_timeline's DataFrame), and bad input (a table
that is not a trace, a CTA or launch not traced, steps backwards) refused with exit 1 and no file."""
import os
import subprocess

import pytest

from sweep_tables import ROOT

PY = "/usr/bin/python3"
SCRIPT = os.path.join(ROOT, "scripts", "plot_cta_timeline.py")
MAGIC = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}
FLASH2 = ["--device", "teaching", "--kernel", "flash2", "--set", "seq=512", "--set", "head_dim=64", "--set", "heads=2"]
FLASH3 = ["--device", "h100-sxm", "--kernel", "flash3", "--set", "seq=1024", "--set", "head_dim=128", "--set", "heads=2"]
SAMPLED = ["--device", "h200", "--kernel", "flash2", "--set", "seq=4096", "--set", "head_dim=128", "--set", "heads=8",
           "--set", "sim.mode=sampled", "--set", "device.sm.count=8"]


def trace(attnsim_bin, tmp_path, args, ctas="0"):
    path = tmp_path / "trace.tsv"
    r = subprocess.run([attnsim_bin, "run", *args, "--trace", str(path), "--trace-ctas", ctas],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return path


def draw(path, out, *options):
    env = dict(os.environ, MPLBACKEND="Agg", ATTNSIM_FIGURE_CHECK="1")
    return subprocess.run([PY, SCRIPT, str(path), str(out), *options], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.parametrize("args, options", [(FLASH2, []), (FLASH3, ["--steps", "1:3"]), (SAMPLED, ["--steps", "10:20"])],
                         ids=["flash2", "flash3", "sampled"])
def test_figures_in_every_format(attnsim_bin, tmp_path, check, args, options):
    path = trace(attnsim_bin, tmp_path, args, "0,1")
    for ext, magic in MAGIC.items():
        out = tmp_path / ("fig" + ext)
        r = draw(path, out, *options)
        check(r.returncode == 0, f"{ext}: {r.stderr}")
        check(out.exists() and out.read_bytes()[:len(magic)] == magic, f"{out} is a {ext} file")
    r = draw(path, tmp_path / "one.png", "--cta", "1", "--cycles", "--title", "CTA 1")
    check(r.returncode == 0, r.stderr)


def test_python_draws_the_dataframe(attnsim, tmp_path, check):
    df = attnsim.cta_timeline("teaching", "flash2", seq=512, head_dim=64, heads=2, ctas=[0])
    out = attnsim.plot.cta_timeline(df, str(tmp_path / "t.png"), steps="1:2")
    check(open(out, "rb").read(4) == MAGIC[".png"], "a PNG from the DataFrame")
    with pytest.raises(attnsim.ConfigError, match="CTA 7 is not in the trace"):
        attnsim.plot.cta_timeline(df, str(tmp_path / "u.png"), cta=[7])


def test_bad_input_is_refused(attnsim_bin, tmp_path, check):
    path = trace(attnsim_bin, tmp_path, FLASH2)
    other = tmp_path / "other.tsv"
    other.write_text("a\tb\n1\t2\n")
    cases = [
        ((other,), "not an attnsim run --trace table"),
        ((tmp_path / "missing.tsv",), "no such file"),
        ((path, "--cta", "5"), "CTA 5 is not in the trace"),
        ((path, "--launch", "3"), "launch 3 is not in the trace"),
        ((path, "--steps", "4:2"), "B is before A"),
        ((path, "--steps", "x"), "expected A:B"),
    ]
    for i, (args, message) in enumerate(cases):
        out = tmp_path / f"bad{i}.png"
        r = draw(args[0], out, *[str(a) for a in args[1:]])
        check(r.returncode == 1 and message in r.stderr, f"{args}: rc {r.returncode}: {r.stderr.strip()}")
        check(not out.exists(), f"{out} not written")
