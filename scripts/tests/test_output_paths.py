#!/usr/bin/python3
"""The output-path policy (docs/output-paths.md) outside the C++ tests: the figure scripts'
shared writer (scripts/attnsim_results.py write_output/savefig, through plot_softmax_trace.py) and
the attnsim binary as a real process, on paths made in a temporary directory (never under /dev):
a FIFO (read by a thread, with a timeout), a link, a dangling link, a directory, a socket, and
/proc/self/fd/1 as a pipe (what /dev/stdout leads to). Each special file is what it was afterwards.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_output_paths.py"""
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import attnsim_results as ar  # noqa: E402

PY = "/usr/bin/python3"
PLOT = os.path.join(ROOT, "scripts", "plot_softmax_trace.py")
HDF5 = b"\x89HDF\r\n\x1a\n"


def binary():
    b = os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim"))
    return b if os.path.exists(b) else None


def kind(path):
    return stat.S_IFMT(os.lstat(path).st_mode)


def read_fifo(path, timeout=60):
    """Starts a reader of FIFO `path` (opened at once, so a writer never blocks on open); returns a
    function that waits for the writer to close and gives the bytes (None on a timeout)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    got, done = [], threading.Event()

    def loop():
        import select
        p = select.poll()
        p.register(fd, select.POLLIN)
        while True:
            if not p.poll(timeout * 1000):
                got.append(None)
                break
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                break
            got.append(chunk)
        os.close(fd)
        done.set()

    threading.Thread(target=loop, daemon=True).start()

    def finish():
        done.wait(timeout + 5)
        return None if None in got or not done.is_set() else b"".join(got)
    return finish


def make_socket(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.close()


def refused(f):
    """The message of the OutputPathError `f` raises (exit 2), or None."""
    try:
        f()
    except ar.OutputPathError as e:
        assert e.code == 2
        return e.message
    return None


def test_helper_on_every_kind_of_path():
    with tempfile.TemporaryDirectory() as d:
        data = b"x" * 200000
        # A regular file: replaced, no temporary left.
        out = os.path.join(d, "f.bin")
        with open(out, "w") as f:
            f.write("older")
        ar.write_output(out, data)
        assert open(out, "rb").read() == data
        # A link (relative, into another directory): its target replaced, the link stays.
        os.mkdir(os.path.join(d, "sub"))
        os.symlink("sub/real.bin", os.path.join(d, "link.bin"))
        ar.write_output(os.path.join(d, "link.bin"), data)
        assert kind(os.path.join(d, "link.bin")) == stat.S_IFLNK
        assert open(os.path.join(d, "sub", "real.bin"), "rb").read() == data
        assert sorted(os.listdir(os.path.join(d, "sub"))) == ["real.bin"]
        # A dangling link into a missing directory: exit 2 naming it.
        os.symlink("nodir/x.bin", os.path.join(d, "dangling.bin"))
        msg = refused(lambda: ar.write_output(os.path.join(d, "dangling.bin"), data))
        assert msg and "is a dangling symbolic link to" in msg and "does not exist" in msg, msg
        # A directory and a socket: exit 2 naming the path and its kind.
        os.mkdir(os.path.join(d, "dir"))
        make_socket(os.path.join(d, "sock"))
        msg = refused(lambda: ar.write_output(os.path.join(d, "dir"), data))
        assert msg and msg.startswith(os.path.join(d, "dir") + ": is a directory"), msg
        msg = refused(lambda: ar.write_output(os.path.join(d, "sock"), data))
        assert msg and msg.startswith(os.path.join(d, "sock") + ": is a socket"), msg
        assert kind(os.path.join(d, "dir")) == stat.S_IFDIR and kind(os.path.join(d, "sock")) == stat.S_IFSOCK
        # A FIFO: the bytes once, and it stays a FIFO.
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        finish = read_fifo(fifo)
        ar.write_output(fifo, data)
        assert finish() == data
        assert kind(fifo) == stat.S_IFIFO
        if os.geteuid() == 0:  # mknod in the temporary directory, never under /dev
            full = os.path.join(d, "full")
            os.mknod(full, 0o644 | stat.S_IFCHR, os.makedev(1, 7))
            msg = refused(lambda: ar.write_output(full, data))
            assert msg == f"{full}: cannot write: no space left on device", msg
            assert kind(full) == stat.S_IFCHR
        assert not [n for n in os.listdir(d) if ".tmp" in n], os.listdir(d)


def test_figure_script_on_every_kind_of_path():
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.json")
        with open(trace, "w") as f:
            json.dump({"block": 4, "blocks": [
                {"index": 1, "scores": [1, 3, 2, 5], "m_old": None, "m": 5, "l": 1.2034379904932109,
                 "rescale": None, "max_grew": True}],
                "softmax": [0.0320586, 0.2368828, 0.0871443, 0.6439143],
                "direct_softmax": [0.0320586, 0.2368828, 0.0871443, 0.6439143], "max_abs_difference": 0}, f)

        def plot(out):
            return subprocess.run([PY, PLOT, "--input", trace, "--out", out], capture_output=True, text=True,
                                  timeout=120)
        os.mkdir(os.path.join(d, "figs"))
        os.symlink("figs/fig.png", os.path.join(d, "link.png"))
        r = plot(os.path.join(d, "link.png"))
        assert r.returncode == 0, r.stderr
        assert kind(os.path.join(d, "link.png")) == stat.S_IFLNK
        assert open(os.path.join(d, "figs", "fig.png"), "rb").read(4) == b"\x89PNG"
        os.mkdir(os.path.join(d, "dir.png"))
        r = plot(os.path.join(d, "dir.png"))
        assert r.returncode == 2 and "dir.png: is a directory" in r.stderr, (r.returncode, r.stderr)
        make_socket(os.path.join(d, "sock.png"))
        r = plot(os.path.join(d, "sock.png"))
        assert r.returncode == 2 and "sock.png: is a socket" in r.stderr, (r.returncode, r.stderr)
        fifo = os.path.join(d, "fifo.png")
        os.mkfifo(fifo)
        finish = read_fifo(fifo)
        r = plot(fifo)
        got = finish()
        assert r.returncode == 0, r.stderr
        assert got is not None and got[:4] == b"\x89PNG", got[:8] if got else got
        assert kind(fifo) == stat.S_IFIFO and kind(os.path.join(d, "sock.png")) == stat.S_IFSOCK
        assert sorted(os.listdir(os.path.join(d, "figs"))) == ["fig.png"]


def test_binary_to_a_fifo_and_to_its_own_stdout():
    att = binary()
    if not att:
        print("skip: no attnsim binary ($ATTNSIM)")
        return
    run = [att, "run", "--device", "teaching", "--kernel", "flash2", "--set", "seq=128", "--set", "head_dim=32"]
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        finish = read_fifo(fifo)
        r = subprocess.run(run + ["--out", fifo], capture_output=True, timeout=120)
        got = finish()
        assert r.returncode == 0, r.stderr
        assert got is not None and got[:8] == HDF5
        assert kind(fifo) == stat.S_IFIFO and os.listdir(d) == ["fifo"]
        # stdout a pipe: the results file alone on stdout, the report on stderr.
        r = subprocess.run(run + ["--out", "/proc/self/fd/1"], capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stdout[:8] == HDF5 and b"wrote /proc/self/fd/1" in r.stderr, (r.stdout[:16], r.stderr[-200:])
        copy = os.path.join(d, "copy.h5")
        with open(copy, "wb") as f:
            f.write(r.stdout)
        import h5py
        with h5py.File(copy, "r") as f:
            assert int(f.attrs["complete"]) == 1 and len(f["table/point_index"]) == 1
        # A directory: exit 2 before the run, naming it.
        r = subprocess.run(run + ["--out", d], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and f"--out: {d}: is a directory" in r.stderr, r.stderr


if __name__ == "__main__":
    import pytest
    sys.exit(pytest.main([__file__, "-q"]))
