"""The course figures from a notebook: scripts/plot_*.py drawn from a DataFrame or a results file.

    df = attnsim.sweep("experiments/block_size/sweep.yaml")
    attnsim.plot.traffic_vs_block(df, "traffic.png", title="FlashAttention Fig. 2")

Every function takes `data` (a DataFrame from attnsim.sweep / attnsim.read, or a results file path)
and `out` (.png, .svg or .pdf), plus the script's options as keywords (``--sram-bytes`` is
``sram_bytes=``; repeatable options take lists), and returns `out`. Figures that need per-point
data (kernels, time series: kernel_breakdown, timeline, achieved occupancy) read it from the file:
pass the path, or a DataFrame from ``sweep(out=...)`` / ``read(path)`` (its ``attrs["path"]``).
cta_timeline draws ``attnsim.cta_timeline()``'s DataFrame (or an ``attnsim run --trace`` TSV path).
Bad input raises attnsim.ConfigError with the script's message.
"""
import importlib
import os
import sys

from . import _core, _paths

ConfigError = _core.ConfigError

SCRIPTS = os.path.join(_paths.SOURCE_DIR, "scripts")
FIGURES = ("traffic_vs_block", "roofline", "scaling", "occupancy_heatmap", "kernel_breakdown", "timeline",
           "cta_timeline")


def _module(name):
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    return importlib.import_module(name)


def figure(name, data, out, **options):
    """Draws scripts/plot_<name>.py's figure of `data` into `out`; see the module docstring."""
    if name not in FIGURES:
        raise ConfigError(f"figure: unknown figure '{name}'; known: {', '.join(FIGURES)}")
    ar = _module("attnsim_results")
    script = _module("plot_" + name)
    source = os.fspath(data) if isinstance(data, (str, os.PathLike)) else ar.register_frame(data)
    argv = [source, os.fspath(out)]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if v is True:
                argv.append(flag)
            elif v is not None and v is not False:
                argv += [flag, str(v)]
    try:
        script.main(argv)
    except SystemExit as e:
        if e.code not in (None, 0):
            raise ConfigError(str(e.code)) from None
    finally:
        ar._FRAMES.pop(source, None)
    return out


def traffic_vs_block(data, out, **options):
    """HBM traffic against block size, simulated vs closed form (plot_traffic_vs_block.py)."""
    return figure("traffic_vs_block", data, out, **options)


def roofline(data, out, **options):
    """Each point on its device's roofline (plot_roofline.py)."""
    return figure("roofline", data, out, **options)


def scaling(data, out, **options):
    """Traffic and time against sequence length, standard vs tiled (plot_scaling.py)."""
    return figure("scaling", data, out, **options)


def occupancy_heatmap(data, out, **options):
    """Occupancy over two swept parameters (plot_occupancy_heatmap.py)."""
    return figure("occupancy_heatmap", data, out, **options)


def kernel_breakdown(data, out, **options):
    """Per-kernel time and traffic of each point (plot_kernel_breakdown.py; needs the file)."""
    return figure("kernel_breakdown", data, out, **options)


def timeline(data, out, **options):
    """One point's bandwidth and active-warp time series (plot_timeline.py; needs the file)."""
    return figure("timeline", data, out, **options)


def cta_timeline(data, out, **options):
    """CTAs' ops over loop steps: memory, compute and wait lanes (plot_cta_timeline.py; `data` is
    attnsim.cta_timeline()'s DataFrame or an `attnsim run --trace FILE.tsv` path)."""
    return figure("cta_timeline", data, out, **options)
