#!/usr/bin/python3
"""Run a Jupyter notebook's code cells without Jupyter: store their outputs (--update) or check them.

usage: run_notebook.py [--update] NOTEBOOK.ipynb...

The code cells run in order, in one namespace, in the notebook's directory, as Jupyter runs
them (what the run adds to that directory is removed afterwards), with matplotlib's Agg
backend: a cell's printed text is its stdout stream; the value of its last line, if that line
is an expression and not None, its result (text/plain: repr; an image object from
IPython.display: image/png). Standard error (progress bars) is shown, not stored.

Without --update, the fresh outputs are compared with the stored ones (text exactly; an image
only by being there), except in cells tagged "varies" (CPU times): exit 1 and the first
difference when they differ. With --update the notebook is rewritten with the fresh outputs.
Exit 2: not a notebook; 3: a cell raised (its traceback is printed). Needs attnsim importable
(source scripts/env.sh, or ATTNSIM_PYTHONPATH=build/python); IPython is not needed: a stand-in
IPython.display (Image, display) records what the cells display, whether IPython is installed
or not.
"""
import argparse
import ast
import base64
import contextlib
import io
import json
import os
import shutil
import sys
import traceback
import types

os.environ.setdefault("MPLBACKEND", "Agg")


class _Image:
    """Stand-in for IPython.display.Image: a PNG file's bytes."""

    def __init__(self, filename=None, data=None, **_):
        if data is None:
            with open(filename, "rb") as f:
                data = f.read()
        self.data = data


def _install_display_stand_in(outputs_of):
    # Also where IPython is installed: its display functions render nothing outside a kernel.
    module = types.ModuleType("IPython.display")
    module.Image = _Image
    module.display = lambda *objs: [outputs_of().append(_output_of(o)) for o in objs]
    package = types.ModuleType("IPython")
    package.display = module
    package.get_ipython = lambda: None  # matplotlib asks whether it runs in an IPython shell: no
    sys.modules["IPython"] = package
    sys.modules["IPython.display"] = module


def _lines(text):
    return text.splitlines(keepends=True)


def _output_of(value, count=None):
    if isinstance(value, _Image):
        return {"output_type": "display_data", "metadata": {},
                "data": {"image/png": base64.b64encode(value.data).decode("ascii"),
                         "text/plain": ["<IPython.core.display.Image object>"]}}
    out = {"output_type": "execute_result" if count is not None else "display_data", "metadata": {},
           "data": {"text/plain": _lines(repr(value))}}
    if count is not None:
        out["execution_count"] = count
    return out


def run_cells(nb, name):
    """Runs the code cells; returns the list of fresh outputs per code cell."""
    namespace = {"__name__": "__main__"}
    current = []
    _install_display_stand_in(lambda: current)
    fresh = []
    count = 0
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        count += 1
        current = []
        source = "".join(cell.get("source", []))
        tree = ast.parse(source, filename=f"{name} cell {index}")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        stdout = io.StringIO()
        try:
            with contextlib.redirect_stdout(stdout):
                exec(compile(tree, f"{name} cell {index}", "exec"), namespace)
                value = None
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), f"{name} cell {index}", "eval"), namespace)
        except Exception:
            sys.stdout.write(stdout.getvalue())
            traceback.print_exc()
            print(f"run_notebook.py: {name}: code cell {count} (cell {index}) raised", file=sys.stderr)
            sys.exit(3)
        outputs = []
        if stdout.getvalue():
            outputs.append({"output_type": "stream", "name": "stdout", "text": _lines(stdout.getvalue())})
        outputs.extend(current)
        if value is not None:
            outputs.append(_output_of(value, None if isinstance(value, _Image) else count))
        fresh.append((index, count, outputs))
    return fresh


def _comparable(outputs):
    result = []
    for o in outputs:
        data = o.get("data", {})
        if "image/png" in data:
            result.append(("image",))
        elif o["output_type"] == "stream":
            result.append(("stream", o["name"], "".join(o["text"])))
        else:
            result.append((o["output_type"], "".join(data.get("text/plain", []))))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[2:]))
    parser.add_argument("--update", action="store_true", help="rewrite the notebooks with the fresh outputs")
    parser.add_argument("notebooks", nargs="+", metavar="NOTEBOOK.ipynb")
    args = parser.parse_args()
    if os.environ.get("ATTNSIM_PYTHONPATH"):
        sys.path.insert(0, os.path.abspath(os.environ["ATTNSIM_PYTHONPATH"]))
    status = 0
    for path in args.notebooks:
        path = os.path.abspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                nb = json.load(f)
            if nb.get("nbformat") != 4 or not isinstance(nb.get("cells"), list):
                raise ValueError("not an nbformat 4 notebook")
        except (OSError, ValueError) as e:
            print(f"run_notebook.py: {path}: {e}", file=sys.stderr)
            return 2
        home, here = os.getcwd(), os.path.dirname(path)
        before = set(os.listdir(here))
        os.chdir(here)
        try:
            fresh = run_cells(nb, os.path.basename(path))
        finally:
            os.chdir(home)
            for entry in set(os.listdir(here)) - before:  # what the cells wrote (results/ and the like)
                target = os.path.join(here, entry)
                shutil.rmtree(target) if os.path.isdir(target) and not os.path.islink(target) else os.remove(target)
        if args.update:
            for index, count, outputs in fresh:
                nb["cells"][index]["outputs"] = outputs
                nb["cells"][index]["execution_count"] = count
            with open(path, "w", encoding="utf-8") as f:
                json.dump(nb, f, indent=1, ensure_ascii=False)
                f.write("\n")
            print(f"run_notebook.py: {path}: {len(fresh)} code cells run, outputs stored")
            continue
        for index, count, outputs in fresh:
            cell = nb["cells"][index]
            if "varies" in cell.get("metadata", {}).get("tags", []):
                continue
            stored, now = _comparable(cell.get("outputs", [])), _comparable(outputs)
            if stored != now:
                print(f"run_notebook.py: {path}: code cell {count} (cell {index}): outputs differ from the "
                      f"stored ones; run scripts/run_notebook.py --update {os.path.relpath(path, home)} "
                      f"if the change is meant\n  stored: {stored!r:.1500}\n  now:    {now!r:.1500}", file=sys.stderr)
                status = 1
                break
        else:
            print(f"run_notebook.py: {path}: {len(fresh)} code cells run, outputs as stored")
    return status


if __name__ == "__main__":
    sys.exit(main())
