#!/usr/bin/env python3
"""Every experiment with figures has a quick variant (experiments/<name>/quick.yaml, run by
scripts/run.sh experiments/<name> --quick) with the same axes and number of points as its sweep.yaml
(so the figure scripts' point indices hold), and the quick cta_order sweep keeps its point:
head-major reads far more HBM bytes than row-major once K + V exceed the L2.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_quick_experiments.py"""
import glob
import os
import subprocess
import sys
import tempfile

import h5py
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATTNSIM = os.path.abspath(os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim")))


def experiments_with_figures():
    return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "experiments", "*", "figures.sh")))


def test_every_experiment_with_figures_has_a_matching_quick_yaml():
    exps = experiments_with_figures()
    assert len(exps) >= 7, exps
    for e in exps:
        q = os.path.join(e, "quick.yaml")
        assert os.path.exists(q), q
        full, quick = yaml.safe_load(open(os.path.join(e, "sweep.yaml"))), yaml.safe_load(open(q))
        assert full.get("name") == quick.get("name"), e
        assert list(full["axes"]) == list(quick["axes"]), e
        for k, v in full["axes"].items():
            if k == "zip":
                assert list(v) == list(quick["axes"]["zip"]), e
                assert [len(x) for x in v.values()] == [len(x) for x in quick["axes"]["zip"].values()], e
            elif isinstance(v, list):
                assert len(v) == len(quick["axes"][k]), (e, k)
        assert open(q).read().startswith("# Quick variant of experiments/"), q


def test_run_sh_knows_quick():
    text = open(os.path.join(ROOT, "scripts", "run.sh")).read()
    assert '"--quick"' in text and "quick.yaml" in text


def test_quick_cta_order_keeps_its_point():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "q.h5")
        p = subprocess.run([ATTNSIM, "sweep", os.path.join(ROOT, "experiments", "cta_order", "quick.yaml"),
                            "--out", out, "-j", "2"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        t = h5py.File(out, "r")["table"]
        heads, order = t["heads"][()], t["cta_order"].asstr()[()]
        dram = t["dram__bytes_read.sum"][()] + t["dram__bytes_write.sum"][()]
        row = dram[(heads == 32) & (order == "row-major")][0]
        head = dram[(heads == 32) & (order == "head-major")][0]
        assert head > 2 * row, (row, head)
        row8 = dram[(heads == 8) & (order == "row-major")][0]
        head8 = dram[(heads == 8) & (order == "head-major")][0]
        assert abs(head8 - row8) < 0.01 * row8, (row8, head8)  # 8 heads fit in the L2: no difference


def test_quick_tile_shapes_keeps_the_occupancy_of_the_full_shape():
    """tile_shapes' quick variant (64 heads, N = 1024) keeps its occupancy maps: CTAs per SM and
    theoretical occupancy of a tile are those of the full sweep's shape (32 heads, N = 2048)."""
    import json

    limits = ("launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
              "sm__maximum_warps_per_active_cycle_pct")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "q.h5")
        p = subprocess.run([ATTNSIM, "sweep", os.path.join(ROOT, "experiments", "tile_shapes", "quick.yaml"),
                            "--out", out, "-j", "2"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        f = h5py.File(out, "r")
        t = f["table"]
        for bm, bn, st, wp, want_ctas in ((256, 64, 2, 4, 2), (64, 64, 2, 4, 3), (128, 128, 3, 4, 1)):
            row = [i for i in range(len(t["block_m"])) if (t["block_m"][i], t["block_n"][i], t["stages"][i],
                                                           t["warps"][i]) == (bm, bn, st, wp)][0]
            kg = f["points"][str(int(t["point_index"][row]))]["kernels"]
            quick = {r["name"].decode(): float(r["value"]) for r in kg[list(kg)[0]]["metrics"][()]}
            full = subprocess.run([ATTNSIM, "run", "--device", "h200", "--kernel", "flash2", "--set", "batch=1",
                                   "--set", "heads=32", "--set", "seq=2048", "--set", "head_dim=128",
                                   "--set", f"block_m={bm}", "--set", f"block_n={bn}", "--set", f"stages={st}",
                                   "--set", f"warps={wp}", "--json"], capture_output=True, text=True)
            assert full.returncode == 0, full.stderr
            fm = json.loads(full.stdout)["kernels"][0]["metrics"]
            for k in limits:
                assert quick[k] == fm[k], (bm, bn, st, wp, k, quick[k], fm[k])
            assert min(quick[k] for k in limits[:2]) == want_ctas, (bm, bn, st, wp, quick)
        f.close()


def test_quick_tile_shapes_keeps_the_time_ranking_of_the_full_shape():
    """The point of tile_shapes is which tile wins: the quick variant ranks a spread of
    configurations (the fastest ones and slow ones) as the full shape (32 heads, N = 2048) does."""
    configs = [(256, 64, 2, 4), (256, 64, 1, 4), (128, 128, 2, 4), (128, 64, 2, 4), (64, 64, 2, 4),
               (64, 128, 1, 8), (256, 128, 1, 8)]
    spec = {"name": "tile_shapes_full_subset", "device": "h200",
            "base": {"kernel": "flash2", "batch": 1, "heads": 32, "seq": 2048, "head_dim": 128, "dtype": "fp16",
                     "pass": "fwd"},
            "axes": {"zip": {k: [c[i] for c in configs] for i, k in enumerate(("block_m", "block_n", "stages",
                                                                                "warps"))}}}

    def times(path, keep):
        t = h5py.File(path, "r")["table"]
        out = {}
        for i in range(len(t["block_m"])):
            key = tuple(int(t[k][i]) for k in ("block_m", "block_n", "stages", "warps"))
            if key in keep:
                out[key] = float(t["gpu__time_duration.sum"][i])
        return out

    with tempfile.TemporaryDirectory() as d:
        full_yaml = os.path.join(d, "full.yaml")
        with open(full_yaml, "w") as f:
            yaml.safe_dump(spec, f)
        for yml, out in ((full_yaml, "full.h5"), (os.path.join(ROOT, "experiments", "tile_shapes", "quick.yaml"),
                                                  "quick.h5")):
            p = subprocess.run([ATTNSIM, "sweep", yml, "--out", os.path.join(d, out), "-j", "2"],
                               capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
        full, quick = times(os.path.join(d, "full.h5"), configs), times(os.path.join(d, "quick.h5"), configs)
        assert sorted(full) == sorted(configs) and sorted(quick) == sorted(configs), (full, quick)
        assert sorted(configs, key=full.get) == sorted(configs, key=quick.get), (full, quick)


def test_default_figure_title_is_the_sweeps_name_and_question():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import attnsim_results as ar
    with tempfile.TemporaryDirectory() as d:
        for sweep, want in (("sweep.yaml", "block_size: FlashAttention (Dao et al. 2022, arXiv 2205.14135) Figure 2 middle"),
                            ("quick.yaml", "block_size (quick): FlashAttention (Dao et al. 2022")):
            out = os.path.join(d, sweep + ".h5")
            src = os.path.join(ROOT, "experiments", "block_size", sweep)
            # One point is enough for the title: keep the file's text, shrink the workload.
            text = open(src).read().replace("  batch: 64", "  batch: 1").replace("  batch: 2", "  batch: 1")
            text = text.replace("block_n: [64, 128, 256, 512]", "block_n: [64]")
            text = text.replace("device.l2.capacity_bytes: [41943040, 0]", "device.l2.capacity_bytes: [0]")
            path = os.path.join(d, sweep)
            open(path, "w").write(text)
            p = subprocess.run([ATTNSIM, "sweep", path, "--out", out], capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
            r = ar.Results(out)
            title = r.sweep_title()
            r.close()
            assert title.startswith(want), title


if __name__ == "__main__":
    import pytest
    sys.exit(pytest.main([__file__, "-q"]))
