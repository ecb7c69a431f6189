"""Reading attnsim results files (docs/hdf5-schema.md) for the summary and figure scripts.

Shared helpers only: the /table columns as a dict of numpy arrays, per-point kernel metrics,
per-point time series, device presets (configs/devices/*.yaml), the greyscale-safe plot
styles, and writing outputs by attnsim's output-path policy (write_output, savefig;
docs/output-paths.md). Runs under /usr/bin/python3 (h5py, numpy, matplotlib with the Agg backend).
"""
import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Distinct markers, line styles and hatches so every figure reads in greyscale.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]
HATCHES = ["//", "..", "xx", "\\\\", "oo", "--", "++", "**", "||", "O", "/.", "\\|", "x.", "-/", "+o"]
GREYS = ["0.0", "0.35", "0.6", "0.2", "0.5", "0.75"]

STATUS_OK = "ok"


def _decode(values):
    if values.dtype.kind in ("S", "O"):
        return np.array([v.decode() if isinstance(v, bytes) else str(v) for v in values], dtype=object)
    return values


# DataFrames handed to the figure scripts by attnsim.plot (docs/python.md), by token.
_FRAMES = {}


def register_frame(df):
    """A name under which Results(name) reads `df` (a pandas DataFrame of a results table, as
    attnsim.sweep / attnsim.read return it) instead of a file."""
    token = f"<DataFrame {len(_FRAMES) + 1}>"
    _FRAMES[token] = df
    return token


class Results:
    """One results file: the /table columns, and lazy access to /points/<i>. `path` may also be a
    pandas DataFrame of the table (or register_frame's name for one): its /points come from the
    file in df.attrs["path"] when it names one, else the per-point data is empty."""

    def __init__(self, path):
        frame = _FRAMES.get(path) if isinstance(path, str) else path
        if frame is not None and not isinstance(frame, (str, os.PathLike)):
            self._from_frame(path if isinstance(path, str) else "<DataFrame>", frame)
            return
        self.path = path
        self.file = h5py.File(path, "r")
        if "table" not in self.file:
            raise SystemExit(f"{path}: no /table group (not an attnsim results file?)")
        grp = self.file["table"]
        self.columns = list(grp.keys())
        # Keep the writer's column order (creation order) when the group tracks it.
        try:
            names = []
            grp.id.links.iterate(lambda n: names.append(n.decode()), idx_type=h5py.h5.INDEX_CRT_ORDER)
            if len(names) == len(self.columns):
                self.columns = names
        except Exception:  # order not tracked: alphabetical is fine
            pass
        self.table = {c: _decode(grp[c][()]) for c in self.columns}
        self.rows = len(self.table[self.columns[0]]) if self.columns else 0

    def _from_frame(self, name, df):
        self.path = name
        source = df.attrs.get("path")
        self.file = h5py.File(source, "r") if source and os.path.exists(source) else {}
        self.columns = [str(c) for c in df.columns]
        self.table = {c: _decode(df[c].to_numpy()) for c in self.columns}
        self.rows = len(df)

    def close(self):
        if hasattr(self.file, "close"):
            self.file.close()

    def sweep_title(self):
        """A figure title from the sweep file: its `name` and its question, the first sentence of the
        comment that opens the file ("block_size: FlashAttention ... Figure 2 middle ..."); a quick
        variant's own note (a first paragraph starting "Quick variant") is skipped and "(quick)" added.
        None for a file without sweep text (`attnsim run --out`)."""
        text = self.file.attrs.get("sweep_file_text")
        if text is None:
            return None
        text = text.decode() if isinstance(text, bytes) else str(text)
        head = text.split("\nname:", 1)[0] if "\nname:" in text else ""
        paragraphs, cur = [], []
        for line in head.splitlines():
            if not line.startswith("#"):
                continue
            line = line.lstrip("#").strip()
            if line:
                cur.append(line)
            elif cur:
                paragraphs.append(" ".join(cur))
                cur = []
        if cur:
            paragraphs.append(" ".join(cur))
        quick = bool(paragraphs) and paragraphs[0].startswith("Quick variant")
        if quick:
            paragraphs = paragraphs[1:]
        m = re.search(r"^\s*name:\s*([^#\n]+)", text, re.M)
        name = m.group(1).strip() + (" (quick)" if quick else "") if m else None
        question = re.split(r"\.\s+(?=[A-Z])", paragraphs[0])[0].rstrip(".") if paragraphs else ""
        if len(question) > 120:
            question = question[:117].rsplit(" ", 1)[0] + " ..."
        return ": ".join(x for x in (name, question) if x) or None

    def col(self, name, default=np.nan):
        if name in self.table:
            return self.table[name]
        return np.full(self.rows, default, dtype=object if isinstance(default, str) else float)

    def has(self, name):
        return name in self.table

    def status(self):
        if "status" in self.table:
            return self.table["status"]
        return np.array([STATUS_OK] * self.rows, dtype=object)

    def ok(self):
        return np.array([s == STATUS_OK for s in self.status()])

    def param_columns(self):
        """Swept parameters: every column but point_index/status/reason and the metrics (whose
        Nsight Compute / attnsim__ names contain '__')."""
        return [c for c in self.columns if c not in ("point_index", "status", "reason") and "__" not in c]

    def varying_params(self):
        """Parameters that take more than one value over the rows."""
        out = []
        for c in self.param_columns():
            vals = self.table[c]
            if len({str(v) for v in vals}) > 1:
                out.append(c)
        return out

    def point_index(self, row):
        if "point_index" in self.table:
            return int(self.table["point_index"][row])
        return row

    def point_group(self, row):
        pts = self.file.get("points")
        if pts is None:
            return None
        return pts.get(str(self.point_index(row)))

    def kernels(self, row):
        """[(name, {metric: value})] for each kernel launched at this row's point."""
        g = self.point_group(row)
        if g is None or "kernels" not in g:
            return []
        out = []
        names = []
        try:
            g["kernels"].id.links.iterate(lambda n: names.append(n.decode()), idx_type=h5py.h5.INDEX_CRT_ORDER)
        except Exception:
            names = sorted(g["kernels"].keys(), key=lambda s: int(s.split("_", 1)[0]) if s.split("_", 1)[0].isdigit() else 0)
        for k in names:
            kg = g["kernels"][k]
            name = kg.attrs.get("name", k.split("_", 1)[-1])
            if isinstance(name, bytes):
                name = name.decode()
            out.append((str(name), read_metrics(kg)))
        return out

    def series(self, row):
        """(period_ns, {name: array}) of the point's joined time series, or (None, {})."""
        g = self.point_group(row)
        if g is None or "series" not in g:
            return None, {}
        s = g["series"]
        return float(s.attrs.get("period_ns", np.nan)), {k: s[k][()] for k in s.keys()}

    def config_text(self, row):
        g = self.point_group(row)
        if g is None or "config" not in g:
            return ""
        v = g["config"][()]
        return v.decode() if isinstance(v, bytes) else str(v)


def read_metrics(group):
    """The compound 'metrics' dataset (name, value) of a point or kernel group as a dict."""
    if "metrics" not in group:
        return {}
    out = {}
    for rec in group["metrics"][()]:
        name = rec["name"]
        out[name.decode() if isinstance(name, bytes) else str(name)] = float(rec["value"])
    return out


def kernel_metric(res, row, name, reduce="max"):
    """A launch__* metric, which the table does not total: from the point's kernels."""
    if res.has(name):
        return float(res.col(name)[row])
    vals = [m[name] for _, m in res.kernels(row) if name in m]
    if not vals:
        return np.nan
    return max(vals) if reduce == "max" else min(vals)


def _scalar(text):
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    if t.startswith("[") and t.endswith("]"):
        return [_scalar(x) for x in t[1:-1].split(",") if x.strip()]
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def parse_simple_yaml(text):
    """The YAML subset attnsim writes and ships (nested block mappings of scalars, inline
    lists, '#' comments). Uses PyYAML when installed; this fallback keeps the scripts free of
    packages scripts/setup.sh does not install."""
    try:
        import yaml

        return yaml.safe_load(text) or {}
    except ImportError:
        pass
    root = {}
    stack = [(-1, root)]
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip() or ":" not in line:
            continue
        indent = len(line) - len(line.lstrip())
        key, _, value = line.strip().partition(":")
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if value.strip() == "":
            parent[key] = {}
            stack.append((indent, parent[key]))
        else:
            parent[key] = _scalar(value)
    return root


def load_device(name):
    """A device preset's YAML as a dict (configs/devices/<name>.yaml, or a path)."""
    path = name if os.path.exists(name) else os.path.join(ROOT, "configs", "devices", f"{name}.yaml")
    with open(path) as f:
        return parse_simple_yaml(f.read())


def attnsim_binary():
    b = os.environ.get("ATTNSIM")
    if b and os.path.exists(b):
        return b
    for d in ("build", "build-figures"):
        p = os.path.join(ROOT, d, "attnsim")
        if os.path.exists(p):
            return p
    return None


def attnsim_json(args):
    """Runs `attnsim ARGS --json` and returns the parsed object, or None if it cannot."""
    b = attnsim_binary()
    if b is None:
        return None
    try:
        out = subprocess.run([b] + args + ["--json"], check=True, capture_output=True, text=True, timeout=60)
        return json.loads(out.stdout)
    except (subprocess.SubprocessError, json.JSONDecodeError, OSError) as e:
        print(f"warning: attnsim {' '.join(args)}: {e}", file=sys.stderr)
        return None


def fmt_bytes(b):
    if b is None or (isinstance(b, float) and not np.isfinite(b)):
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(b) >= scale:
            return f"{b / scale:.3f} {unit}"
    return f"{b:.0f} B"


class OutputPathError(SystemExit):
    """An output path the policy refuses or cannot write (docs/output-paths.md): exit 2, like
    attnsim. `message` is "<path>: <why>"; it has been printed to stderr."""

    def __init__(self, message):
        super().__init__(2)
        self.message = message


def _refuse(message):
    print(f"error: {message}", file=sys.stderr)
    raise OutputPathError(message)


def _kind(mode):
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def _follow_links(path):
    """The name symbolic links from `path` finally lead to (may not exist yet)."""
    p = path
    for _ in range(41):
        if not os.path.islink(p):
            return p
        link = os.readlink(p)
        p = link if os.path.isabs(link) else os.path.join(os.path.dirname(p), link)
    _refuse(f"{path}: cannot follow: too many levels of symbolic links")


def resolve_output(path, make_dirs=False):
    """("file", target) for a regular file or a new name (links followed: the target is replaced,
    the link stays), ("stream", path) for a character device or FIFO (written through once);
    refuses a directory, socket or block device, and a dangling link into a missing directory.
    The same policy as attnsim (docs/output-paths.md). `make_dirs`: create a plain path's missing
    directory (never a link's)."""
    if not path:
        _refuse("empty output path")
    is_link = os.path.islink(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        _refuse(f"{path}: cannot follow: {e.strerror.lower()}")
    if st is not None:
        kind = _kind(st.st_mode)
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            if not os.access(path, os.W_OK):
                _refuse(f"{path}: cannot write: permission denied")
            return "stream", path
        if not stat.S_ISREG(st.st_mode):
            what = f"a symbolic link to {kind}" if is_link else kind
            if kind == "a directory":
                _refuse(f"{path}: is {what}; give a file name such as {os.path.join(path, 'out.png')}")
            _refuse(f"{path}: is {what}; an output must be a regular file (replaced), a character device or a "
                    "FIFO (written through)")
    target = _follow_links(path) if is_link else path
    d = os.path.dirname(target) or "."
    if not os.path.isdir(d):
        if is_link:
            _refuse(f"{path}: is a dangling symbolic link to {target}, whose directory {d} does not exist")
        if not make_dirs:
            _refuse(f"{path}: directory {d} does not exist")
        os.makedirs(d, exist_ok=True)
    if not os.access(d, os.W_OK):
        _refuse(f"{path}: directory {d} is not writable")
    return "file", target


def write_output(path, data, make_dirs=False):
    """Writes `data` (bytes) as the whole of output `path` by the policy of resolve_output: a file
    through an exclusive temporary "<target>.tmp-<pid>" beside it, fsync'ed and renamed (removed on
    any error, Ctrl-C or SIGTERM); a device or FIFO by one stream of the bytes. A full disk or
    /dev/full exits 2 with "no space left on device"."""
    kind, target = resolve_output(path, make_dirs)
    if kind == "stream":
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        except OSError as e:
            _refuse(f"{path}: cannot write: {e.strerror.lower()}")
        return
    tmp, n = f"{target}.tmp-{os.getpid()}", 0
    while True:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            break
        except FileExistsError:
            n += 1
            tmp = f"{target}.tmp-{os.getpid()}-{n}"
        except OSError as e:
            _refuse(f"{path}: cannot create a temporary file beside it: {e.strerror.lower()}")
    # SIGTERM ends the write like Ctrl-C (KeyboardInterrupt): through the cleanup below.
    old_term = None
    if threading.current_thread() is threading.main_thread():
        def on_term(signum, frame):
            raise KeyboardInterrupt
        old_term = signal.signal(signal.SIGTERM, on_term)
    done = False
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        done = True
    except OSError as e:
        _refuse(f"{path}: cannot write: {e.strerror.lower()}")
    finally:
        if not done:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


def texts_outside(fig, tolerance_px=1.0):
    """Text the figure draws that is cut off by its edge: [(text, (x0, y0, x1, y1) in pixels)]
    for every visible, non-empty text artist (titles, axis and tick labels, legend entries,
    annotations) whose window extent, as drawn by a render of the whole figure, reaches more
    than `tolerance_px` outside the figure's own box (fig.bbox, i.e. figsize x dpi, before any
    bbox_inches="tight" cropping). Texts clipped to an axes and wholly outside it (not shown)
    are skipped. Empty when everything fits."""
    import matplotlib.text as mtext
    from matplotlib.transforms import Bbox

    drawn = []
    original = mtext.Text.draw

    def recording_draw(self, renderer):
        original(self, renderer)
        if not self.get_visible() or not self.get_text().strip():
            return
        box = self.get_window_extent(renderer)
        clip = self.get_clip_box() if self.get_clip_on() else None
        if clip is not None and Bbox.intersection(box, clip) is None:
            return
        drawn.append((self, box))

    mtext.Text.draw = recording_draw
    try:
        fig.canvas.draw()
    finally:
        mtext.Text.draw = original
    fb = fig.bbox
    out = []
    for text, box in drawn:
        if (box.x0 < fb.x0 - tolerance_px or box.y0 < fb.y0 - tolerance_px
                or box.x1 > fb.x1 + tolerance_px or box.y1 > fb.y1 + tolerance_px):
            out.append((text, (box.x0, box.y0, box.x1, box.y1)))
    return out


def layout_with_right_legend(fig, legend, top=0.92, pad=0.01):
    """tight_layout that leaves room at the figure's right edge for `legend` (a fig.legend placed
    there, loc="upper right"), so neither the legend nor the axes' labels are cut off."""
    fig.canvas.draw()
    width = legend.get_window_extent().width / fig.bbox.width
    legend.set_bbox_to_anchor((1.0 - pad / 2, top), transform=fig.transFigure)
    fig.tight_layout(rect=(0, 0, 1.0 - width - pad, 1))


def layout_with_bottom_legend(fig, legend, pad=0.01):
    """tight_layout that leaves room at the figure's bottom for `legend` (a fig.legend placed
    there, loc="lower center"): clear of the data, nothing cut off."""
    fig.canvas.draw()
    height = legend.get_window_extent().height / fig.bbox.height
    legend.set_bbox_to_anchor((0.5, pad / 2), transform=fig.transFigure)
    fig.tight_layout(rect=(0, height + pad, 1, 1))


def wrap_to_width(text, fig, fontsize=10, fraction=0.96):
    """`text` broken into lines that fit `fraction` of the figure's width at `fontsize` points
    (about 0.6 em per character, at spaces only; existing line breaks kept)."""
    import textwrap

    chars = max(24, int(fig.get_figwidth() * 72 * fraction / (0.6 * fontsize)))
    text = text.replace(" ...", "\u00a0...")  # a shortened question's "..." stays on its line
    return "\n".join(textwrap.fill(line, chars, break_long_words=False) for line in text.split("\n"))


def suptitle(fig, text, fontsize=10):
    """A figure title wrapped to the figure's width (wrap_to_width)."""
    return fig.suptitle(wrap_to_width(text, fig, fontsize), fontsize=fontsize)


def time_unit(ns_values):
    """(unit, divisor from ns) that keeps the largest of `ns_values` readable: ns, µs or ms."""
    v = np.asarray(ns_values, dtype=float)
    top = np.nanmax(v) if v.size and np.isfinite(v).any() else 0.0
    return ("ms", 1e6) if top >= 1e6 else ("µs", 1e3) if top >= 1e3 else ("ns", 1.0)


def byte_unit(byte_values):
    """(unit, divisor) for bytes: GB, MB or kB (decimal) by the largest value, else B."""
    v = np.asarray(byte_values, dtype=float)
    top = np.nanmax(np.abs(v)) if v.size and np.isfinite(v).any() else 0.0
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if top >= scale:
            return unit, scale
    return "B", 1.0


AXIS_NAMES = {"block_m": "B_r = block_m (query rows per tile)", "block_n": "B_c = block_n (key/value rows per tile)",
              "stages": "pipeline stages", "warps": "warps per CTA", "seq": "sequence length N",
              "seq_q": "sequence length N (seq_q)", "seq_kv": "KV length seq_kv", "head_dim": "head dim d",
              "sram_bytes": "on-chip SRAM M (bytes)", "num_splits": "num_splits (KV splits)"}


def axis_label(key):
    """Axis text for a swept parameter: block_m reads "B_r = block_m (query rows per tile)"."""
    return AXIS_NAMES.get(key, key)


class FigureLayoutError(SystemExit):
    """A figure with text cut off by its edge (texts_outside), refused by savefig when
    $ATTNSIM_FIGURE_CHECK is set: exit 1, `message` names the texts (printed to stderr)."""

    def __init__(self, message):
        super().__init__(1)
        self.message = message


def check_texts_inside(fig, what="figure"):
    """Raises FigureLayoutError naming every text of `fig` cut off by its edge (texts_outside)."""
    bad = texts_outside(fig)
    if bad:
        w, h = fig.bbox.width, fig.bbox.height
        lines = [f"  {t.get_text()[:60]!r} at x {x0:.0f}..{x1:.0f}, y {y0:.0f}..{y1:.0f} px"
                 for t, (x0, y0, x1, y1) in bad]
        message = f"{what}: {len(bad)} text(s) cut off by the {w:.0f} x {h:.0f} px figure:\n" + "\n".join(lines)
        print(f"error: {message}", file=sys.stderr)
        raise FigureLayoutError(message)


def savefig(fig, path, fmt=None, **kwargs):
    """Saves in the format the extension names (png, svg, pdf) by the output-path policy
    (write_output): rendered in memory, then written once. With $ATTNSIM_FIGURE_CHECK set (not
    empty or 0), first refuses a figure whose text is cut off by its edge (check_texts_inside:
    exit 1, nothing written); the tests set it."""
    ext = (fmt or os.path.splitext(path)[1].lower().lstrip("."))
    if ext not in ("png", "svg", "pdf"):
        raise SystemExit(f"{path}: output must end in .png, .svg or .pdf")
    resolve_output(path, make_dirs=True)  # refused before the figure is drawn
    if os.environ.get("ATTNSIM_FIGURE_CHECK", "") not in ("", "0"):
        check_texts_inside(fig, path)
    buf = io.BytesIO()
    if fmt is None:
        kwargs = dict(dict(dpi=150 if ext == "png" else None, bbox_inches="tight"), **kwargs)
    fig.savefig(buf, format=ext, **kwargs)
    write_output(path, buf.getvalue(), make_dirs=True)


OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"


def achieved_occupancy(res):
    """Achieved occupancy (%) per row: the table column if it has one, else the kernels'
    values weighted by each kernel's gpu__time_duration.sum (the run's time-weighted mean)."""
    out = np.full(res.rows, np.nan)
    if res.has(OCCUPANCY):
        out = res.col(OCCUPANCY).astype(float)
    ok = res.ok()
    for i in range(res.rows):
        if np.isfinite(out[i]) or not ok[i]:
            continue
        num = den = 0.0
        for _, m in res.kernels(i):
            if OCCUPANCY in m:
                t = m.get("gpu__time_duration.sum", 1.0)
                num += m[OCCUPANCY] * t
                den += t
        if den > 0:
            out[i] = num / den
    return out


def dram_bytes(res):
    return res.col("dram__bytes_read.sum").astype(float) + res.col("dram__bytes_write.sum").astype(float)


def point_config(res, row):
    """The point's resolved config (/points/<i>/config YAML) as a dict."""
    text = res.config_text(row)
    return parse_simple_yaml(text) if text else {}


def param(res, row, key):
    """A workload value of a row: its table column if swept, else the point's resolved config."""
    if res.has(key):
        return res.table[key][row]
    cfg = point_config(res, row)
    if key in cfg:
        return cfg[key]
    if key == "seq_q" or key == "seq_kv":
        return cfg.get("seq")
    return None


def label_for(key, value):
    """Human-readable legend text for a parameter value."""
    if key == "device.l2.capacity_bytes":
        v = float(value)
        return "L2 off (every access reaches HBM)" if v == 0 else f"L2 {v / 2**20:.0f} MiB"
    if key == "sram_bytes":  # FlashAttention's on-chip size M (flash1's Algorithm 1 blocks)
        v = float(value)
        return f"M = {v / 1024:g} KiB" if v % 1024 == 0 else f"M = {v:,.0f} B"
    if key == "block_m":
        return f"B_r = block_m = {value}"
    if key == "block_n":
        return f"B_c = block_n = {value}"
    if key in ("seq", "seq_q", "seq_kv"):
        return f"N = {value}" if key == "seq" else f"{key} = {value}"
    return f"{key} = {value}"
