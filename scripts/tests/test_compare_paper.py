"""scripts/compare_paper.py: the FLOP convention, the Spearman and plateau arithmetic, the paper's CSV
selection (forward and backward figures), the backward mode timing only the backward launches,
and a CI-sized subset of the FA-3 paper comparison (flash2 impl fa2 on h100-sxm) that must meet
the comparison's targets (median |error| <= 8 %, worst <= 15 %) on the points it runs.
Run: /usr/bin/python3 -m pytest scripts/tests/test_compare_paper.py"""
import compare_paper as cp


def test_flops_follow_the_papers_convention():
    p = {"batch": 2, "heads": 16, "seq_len": 8192, "head_dim": 128, "causal": False}
    assert cp.flops(p) == 4 * 2 * 16 * 8192 ** 2 * 128
    p["causal"] = True
    assert cp.flops(p) == 2 * 2 * 16 * 8192 ** 2 * 128


def test_spearman_and_ranks():
    assert cp.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert cp.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    assert list(cp.rank([5, 1, 5, 3])) == [3.5, 1.0, 3.5, 2.0]
    assert abs(cp.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) - 0.8) < 1e-12


def test_plateau_compares_16k_with_8k_per_group():
    pts = [{"head_dim": 64, "causal": False, "seq_len": 8192, "tflops": 300.0},
           {"head_dim": 64, "causal": False, "seq_len": 16384, "tflops": 303.0},
           {"head_dim": 64, "causal": True, "seq_len": 8192, "tflops": 100.0}]
    g = cp.plateau(pts, [400.0, 440.0, 1.0])
    assert len(g) == 1  # the causal group has no 16k point
    assert abs(g[0]["measured"] - 0.01) < 1e-12 and abs(g[0]["simulated"] - 0.10) < 1e-12


def test_the_csv_holds_the_papers_fa2_column():
    rows = cp.read_points("fa2", "fp16")
    assert len(rows) == 36  # d 64 / 128 / 256, causal and not, N 512 ... 16k
    assert all(r["batch"] * r["seq_len"] == 16384 and r["heads"] * r["head_dim"] == 2048 for r in rows)
    assert {r["tflops"] for r in rows if r["head_dim"] == 128 and not r["causal"] and r["seq_len"] == 16384} == {370.0}
    assert len(cp.read_points("fa2", "fp16", head_dims=[256], seq_lens=[512])) == 2
    causal_8k = cp.read_points("standard", "fp16", causal=True, seq_lens=[8192])
    assert sorted(r["tflops"] for r in causal_8k) == [18.0, 35.0]


def test_sweep_yaml_selects_the_implementation():
    pts = cp.read_points("triton", "fp16", head_dims=[64], seq_lens=[512], causal=False)
    text = cp.yaml_text(cp.sweep_spec("triton", "fp16", "h100-sxm", pts, {}))
    assert "kernel: flash2" in text and "impl: triton" in text and "seq: [512]" in text
    assert "batch: [32]" in text and "heads: [32]" in text and "causal: [false]" in text


def test_triton_points_launch_as_triton_ops_did():
    """The paper's Triton column ran triton.ops.flash_attention: 128 x 64 tiles, 4 stages, 4 warps
    at head dim 64 and 8 at 128, per point."""
    pts = cp.read_points("triton", "fp16", seq_lens=[1024], causal=False)
    assert sorted(p["head_dim"] for p in pts) == [64, 128]
    text = cp.yaml_text(cp.sweep_spec("triton", "fp16", "h100-sxm", pts, {}))
    dims = [p["head_dim"] for p in pts]
    assert f"warps: [{', '.join('4' if d <= 64 else '8' for d in dims)}]" in text, text
    assert "block_n: [64, 64]" in text and "stages: [4, 4]" in text and "block_m: [128, 128]" in text, text


def test_fa2_subset_meets_the_targets(attnsim_bin):
    """flash2 impl fa2 on h100-sxm against the paper's FA-2 column at head_dim 128, N 512 and 1024,
    causal and not (4 points, a few seconds): median |error| <= 8 %, worst <= 15 %. The whole
    column (36 points, scripts/compare_paper.py --impl fa2) does not meet these yet (median 9.2 %,
    worst 31.1 % at d972bfa):
    docs/accuracy.md, "FlashAttention-3 paper"."""
    r = cp.compare("fa2", head_dims=[128], seq_lens=[512, 1024], binary=attnsim_bin)
    s = r["summary"]
    assert s["points"] == 4 and s["simulated_ok"] == 4
    assert s["median_abs_error"] <= 0.08, s
    assert s["worst_abs_error"] <= 0.15, s


def test_fa2_backward_subset_within_ten_percent(attnsim_bin):
    """flash2 fwd+bwd less its forward on h100-sxm against the paper's FA-2 backward figure at
    head dim 64 and 128, N 512 and 1024 (4 points): median |error| <= 10 %, worst <= 15 %. Before
    the backward prefetched the next query block as FA-2 does these points were 24-30 % too slow
    (docs/accuracy.md, "FlashAttention-2 backward")."""
    r = cp.compare("fa2", head_dims=[64, 128], seq_lens=[512, 1024], binary=attnsim_bin, pass_="bwd")
    s = r["summary"]
    assert s["points"] == 4 and s["simulated_ok"] == 4
    assert s["median_abs_error"] <= 0.10, s
    assert s["worst_abs_error"] <= 0.15, s


def test_standard_takes_the_benchmarks_packed_qkv_both_passes():
    pts = cp.read_points("standard", "fp16", head_dims=[64], seq_lens=[512])
    assert "qkv_packed: true" in cp.yaml_text(cp.sweep_spec("standard", "fp16", "h100-sxm", pts, {}))
    bwd = cp.read_points("standard", "fp16", head_dims=[64], seq_lens=[512], pass_="bwd")
    assert "qkv_packed: true" in cp.yaml_text(cp.sweep_spec("standard", "fp16", "h100-sxm", bwd, {}, pass_="bwd"))


def test_launches_run_back_to_back_unless_overridden():
    pts = cp.read_points("standard", "fp16", head_dims=[64], seq_lens=[512])
    assert "device.l2.carry_writeback: true" in cp.yaml_text(cp.sweep_spec("standard", "fp16", "h100-sxm", pts, {}))
    off = cp.sweep_spec("standard", "fp16", "h100-sxm", pts, {"device.l2.carry_writeback": "false"})
    assert "device.l2.carry_writeback: false" in cp.yaml_text(off)


def test_backward_counts_two_and_a_half_forwards():
    p = {"batch": 2, "heads": 16, "seq_len": 8192, "head_dim": 128, "causal": False}
    assert cp.flops(p, "bwd") == 2.5 * cp.flops(p)


def test_the_bwd_csv_holds_the_papers_backward_figure():
    rows = cp.read_points("fa3", "fp16", pass_="bwd")
    assert len(rows) == 12  # d 64 / 128, N 512 ... 16k, no causal panel
    assert not any(r["causal"] for r in rows)
    assert {r["tflops"] for r in rows if r["head_dim"] == 128 and r["seq_len"] == 16384} == {561.0}
    assert {r["tflops"] for r in rows if r["head_dim"] == 64 and r["seq_len"] == 512} == {272.0}
    assert len(cp.read_points("standard", "fp16", pass_="bwd")) == 10  # OOM at 16k left out
    assert cp.read_points("fa3", "fp16", causal=True, pass_="bwd") == []


def test_bwd_mode_runs_fwdbwd_and_times_only_the_backward_launches(attnsim_bin):
    pts = cp.read_points("fa3", "fp16", head_dims=[64], seq_lens=[512], pass_="bwd")
    text = cp.yaml_text(cp.sweep_spec("fa3", "fp16", "h100-sxm", pts, {}, "bwd"))
    assert "kernel: flash3" in text and "pass: fwdbwd" in text
    spec = cp.sweep_spec("fa3", "fp16", "h100-sxm", pts, {}, "bwd")
    bwd = cp.simulate(spec, 1, attnsim_bin, "bwd")[0]
    total = cp.simulate(spec, 1, attnsim_bin, "fwd")[0]  # the same run, all launches
    fwd = cp.simulate(cp.sweep_spec("fa3", "fp16", "h100-sxm", pts, {}), 1, attnsim_bin)[0]
    assert 0 < bwd < total
    assert abs(total - bwd - fwd) <= 0.01 * total  # the forward launch is the rest


def test_speedup_pairs_points_and_counts_those_within_10_percent():
    fa3 = {"points": [{"head_dim": 128, "causal": False, "seq_len": 512, "tflops": 450.0, "simulated": 600.0},
                      {"head_dim": 128, "causal": True, "seq_len": 512, "tflops": 300.0, "simulated": 310.0}]}
    fa2 = {"summary": {"impl": "fa2"},
           "points": [{"head_dim": 128, "causal": False, "seq_len": 512, "tflops": 300.0, "simulated": 300.0},
                      {"head_dim": 128, "causal": True, "seq_len": 512, "tflops": 200.0, "simulated": 200.0}]}
    sp = cp.speedup(fa3, fa2)
    assert sp["vs"] == "fa2" and len(sp["points"]) == 2
    a, b = sp["points"]
    assert abs(a["paper"] - 1.5) < 1e-12 and abs(a["simulated"] - 2.0) < 1e-12 and abs(a["error"] - 1 / 3) < 1e-12
    assert abs(b["error"] - (1.55 / 1.5 - 1)) < 1e-12
    assert sp["within_10pct"] == 1  # 3.3 % in, 33 % out
    assert abs(sp["worst_abs_error"] - 1 / 3) < 1e-12


def test_ablation_shape_is_the_papers_table_2():
    s = cp.ABLATION_SHAPE
    assert (s["batch"], s["heads"], s["seq_len"], s["head_dim"], s["causal"]) == (4, 16, 8448, 128, False)
    assert cp.ABLATION_MS == {"full": 3.538, "no_intrawg_overlap": 4.021}
