"""The native file read in place (issue 26, item 5): arrays mapped from the file, not copied;
a time window opened without the whole trace in memory; writes stay private to the process."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io.native import load_native


def _base(a):
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


def test_arrays_are_mapped_from_the_file_and_equal(tmp_path):
    t = tracevis3d.synthetic(20_000, threads=3, seed=4)
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, path)
    u = load_native(path, mmap=True)
    import mmap

    assert isinstance(_base(u.start), mmap.mmap)  # in place
    for k in ("start", "end", "parent", "func", "thread", "depth"):
        assert np.array_equal(getattr(u, k), getattr(t, k)), k
    copied = load_native(path, mmap=False)
    assert not isinstance(_base(copied.start), mmap.mmap) and np.array_equal(copied.start, t.start)
    u.start[0] += 1.0  # copy-on-write: the file keeps its bytes
    assert load_native(path, mmap=True).start[0] == t.start[0]
    os.replace(path, tmp_path / "moved.tv3d.npz")  # the mapping outlives the name
    assert float(u.end.max()) == float(t.end.max())


def test_only_large_files_are_mapped_by_default(tmp_path, monkeypatch):
    """By default a file is read unless it is `MAP_FROM_BYTES` or larger: a mapped file that
    another program truncates in place kills the process (SIGBUS) on the next page touched
    past its new end, so the small files, most of them, are not exposed to that."""
    import mmap

    from tracevis3d.io import native

    t = tracevis3d.synthetic(5_000, threads=2, seed=3)
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, path)
    assert os.path.getsize(path) < native.MAP_FROM_BYTES
    assert not isinstance(_base(load_native(path).start), mmap.mmap)
    monkeypatch.setattr(native, "MAP_FROM_BYTES", os.path.getsize(path))
    big = load_native(path)
    assert isinstance(_base(big.start), mmap.mmap) == (os.name != "nt")
    assert np.array_equal(big.start, t.start)


def test_a_window_keeps_its_calls(tmp_path):
    t = tracevis3d.synthetic(20_000, threads=2, seed=8)
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, path)
    span = float(t.end.max())
    w = (0.4 * span, 0.5 * span)
    u = tracevis3d.load(path, window=w)
    want = t.subset(time_window=w)
    assert len(u) == len(want) < len(t) and np.array_equal(u.start, want.start)
    json_path = tmp_path / "t.json"
    tracevis3d.save(t, json_path, format="chrome")
    v = tracevis3d.load(json_path, window=w)  # any format: the window after loading
    assert len(v) == len(want)


@pytest.mark.slow
def test_opening_maps_instead_of_reading(tmp_path):
    """A fresh process opens a 2M-call file: its own memory (RssAnon: not the page cache's
    file pages) holds the arrays after a copy, not after the map."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc/self/status (Linux) to tell the process's own memory from the page cache")
    t = tracevis3d.synthetic(2_000_000, threads=4, seed=1)
    path = tmp_path / "big.tv3d.npz"
    tracevis3d.save(t, path)
    size = os.path.getsize(path)
    del t
    code = textwrap.dedent(f"""
        import sys
        import tracevis3d
        from tracevis3d.io.native import load_native

        def anon():
            for line in open("/proc/self/status"):
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])

        base = anon()
        t = load_native({str(path)!r}, mmap=sys.argv[1] == "map")
        print(anon() - base)
        """)
    grown = {}
    for mode in ("map", "copy"):
        r = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        grown[mode] = int(r.stdout.split()[-1]) * 1024
    assert grown["copy"] > 0.6 * size, (grown, size)
    assert grown["map"] < 0.6 * grown["copy"], (grown, size)


def test_max_bytes_bounds_what_is_read_not_what_is_mapped(tmp_path):
    """A mapped file's calls are not read into memory: a file over ``max_bytes`` opens mapped
    (a trace larger than the memory), is refused when it would be copied, and its header,
    which is read, stays bounded."""
    from tracevis3d.io.limits import Limits
    from tracevis3d.model import TraceFormatError

    t = tracevis3d.synthetic(5_000, threads=2, seed=3)
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, path)
    size = os.path.getsize(path)
    assert len(tracevis3d.load(path, max_bytes=size // 4)) == len(t)
    assert len(tracevis3d.load(path, max_bytes=size // 4, window=(0.0, 100.0))) > 0
    with pytest.raises(TraceFormatError, match=f"file is {size} bytes, over the limit .*max_bytes="):
        load_native(path, mmap=False, limits=Limits(max_bytes=size // 4))
    with pytest.raises(TraceFormatError, match="header is [0-9]+ bytes, over the limit of 100 .*max_bytes="):
        tracevis3d.load(path, max_bytes=100)


_CUT_UNDER_THE_MAP = """
import os, sys
import numpy as np
import tracevis3d
from tracevis3d.io import mapguard
from tracevis3d.io.native import load_native
path, guard = sys.argv[1], sys.argv[2] == "guard"
if guard:
    assert mapguard.exit_on_sigbus()
t = load_native(path, mmap=True)
want = float(np.sum(t.end[-1000:]))
os.truncate(path, 100)  # another program cuts the file short while it is mapped
got = float(np.sum(t.end[-1000:]))  # pages past the new end
print("same" if got == want else "differs")
"""


@pytest.mark.parametrize("guard", ["copy", "guard"])
def test_a_file_cut_short_while_mapped_never_kills_the_process_with_sigbus(tmp_path, guard):
    """Issue 68: a native file mapped and then cut short by another program killed the process
    (SIGBUS; inside Blender, the user's session).  By default the mapping is of a private copy:
    the trace reads on as it was.  The command line maps the file itself under a SIGBUS guard:
    one line on stderr, exit status 1, no signal death."""
    if os.name != "posix":
        pytest.skip("SIGBUS is POSIX")
    t = tracevis3d.synthetic(60_000, threads=2, seed=5)
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, path)
    r = subprocess.run([sys.executable, "-c", _CUT_UNDER_THE_MAP, str(path), guard], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr[-500:]}"
    if guard == "copy":
        assert r.returncode == 0 and r.stdout.split()[-1] == "same", r.stderr[-500:]
        assert os.listdir(tmp_path) == ["t.tv3d.npz"], "the private copy is unlinked: nothing left beside"
    else:
        assert r.returncode == 1 and r.stderr.strip().splitlines()[-1].startswith(
            "tracevis3d: error: a memory-mapped trace file was cut short"), r.stderr[-500:]
