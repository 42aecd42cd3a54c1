"""Hostile compact files, round 2 (issue 20): every count checked in exact arithmetic (a
child-count table whose int64 sum wraps once made np.repeat write out of bounds), declared
raw size 0 refused where data follows, inflation bounded by the declared size, calls, depth,
header and metadata bounded by the file's size -- each refusal names its limit.  The hostile
bytes are built here, from a good file."""
import json
import struct
import subprocess
import sys
import tracemalloc
import zlib

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io import compact
from tracevis3d.model import TraceFormatError
from tree_factory import random_trace

N0 = len(compact.MAGIC) + 20


def parts(path):
    data = path.read_bytes()
    _, hs, _hr = struct.unpack("<IQQ", data[len(compact.MAGIC):N0])
    header = json.loads(zlib.decompress(data[N0:N0 + hs]))
    blobs, at = {}, N0 + hs
    for s in header["sections"]:
        blobs[s["name"]] = data[at: at + s["stored"]]
        at += s["stored"]
    return header, blobs


def write(path, header, blobs, hraw=None):
    raw = json.dumps(header).encode()
    hz = zlib.compress(raw, 9)
    path.write_bytes(compact.MAGIC + struct.pack("<IQQ", compact.VERSION, len(hz), len(raw) if hraw is None else hraw)
                     + hz + b"".join(blobs[s["name"]] for s in header["sections"]))
    return path


def set_ints(header, blobs, name, values, zigzag=False, delta=False):
    """Replace section ``name`` by the int64 ``values`` (encoded by the real writer)."""
    w = compact._Writer()
    w.ints(name, np.asarray(values, np.int64), delta=delta, zigzag=zigzag)
    w.finish()
    header["sections"] = [w.sections[0] if s["name"] == name else s for s in header["sections"]]
    blobs[name] = w.blobs[0]


def int_values(path, name):
    """The values of an int section of a good file, as the reader decodes them."""
    header, _ = parts(path)
    data = path.read_bytes()
    hs = struct.unpack("<IQQ", data[len(compact.MAGIC):N0])[1]
    r = compact._Reader(memoryview(data), str(path), header, N0 + hs, 1 << 30)
    s = r.sec[name][0]
    return r.ints(name, s["n"], np.int64)


@pytest.fixture
def good(tmp_path):
    t = random_trace(n_roots=8, fanout=3, max_depth=3, threads=2, seed=3, n_func=6)
    t.meta["origin"] = np.arange(4)
    p = tmp_path / "good.tv3c"
    tracevis3d.save(t, p, format="compact")
    return p


# ------------------------------------------------------------------ exact arithmetic
def test_exact_total_twin():
    """_exact_total against Python's exact sum, on values that wrap numpy's int64 sum."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        m = int(rng.integers(0, 9))
        big = rng.random() < 0.5
        vals = rng.integers(0, (1 << 62) if big else 50, m, dtype=np.int64)
        cap = int(rng.choice([10, 1000, (1 << 62) - 1]))
        exact = sum(int(v) for v in vals)
        got = compact._exact_total(vals, cap)
        assert got == (exact if exact <= cap else cap + 1), (vals, cap)
    four = np.full(4, 1 << 62, np.int64)  # numpy: 2^64 wraps to 0
    assert int(four.sum()) == 0 and compact._exact_total(four, 10) == 11
    assert compact._exact_total(np.array([3, -1]), 10) == -1


def test_child_counts_that_wrap_int64_are_refused_not_a_crash(good, tmp_path):
    """The 772-byte SIGSEGV class: node_nchild sums to 2^64 + n_edges (numpy's sum says
    n_edges).  Run in a child process so that a regression fails the test instead of
    killing the test runner."""
    header, blobs = parts(good)
    nchild = int_values(good, "node_nchild")
    assert nchild.size >= 4
    wrapped = nchild.copy()
    wrapped[:4] += 1 << 62
    assert int(wrapped.sum()) == int(nchild.sum())  # the int64 sum cannot tell
    set_ints(header, blobs, "node_nchild", wrapped)
    p = write(tmp_path / "wrap.tv3c", header, blobs)
    code = ("import sys, tracevis3d\n"
            "try:\n    tracevis3d.load(sys.argv[1])\nexcept tracevis3d.TraceFormatError as e:\n"
            "    print('REFUSED', e)\n")
    out = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "REFUSED" in out.stdout and "node_nchild does not add up" in out.stdout, out.stdout


@pytest.mark.parametrize("name,total", [("obj_count", "obj_ids"), ("args_len", "args_blob")])
def test_per_call_counts_that_wrap_are_refused(good, tmp_path, name, total):
    header, blobs = parts(good)
    v = int_values(good, name)
    if name == "args_len":  # the random trace has no args: give four calls args that sum to 2^64
        assert v.size == 0
        set_ints(header, blobs, "args_call", [0, 1, 2, 3], delta=True, zigzag=True)
        v = np.zeros(4, np.int64)
    v[:4] += 1 << 62
    set_ints(header, blobs, name, v)
    p = write(tmp_path / f"{name}.tv3c", header, blobs)
    with pytest.raises(TraceFormatError, match=rf"{name}.tv3c.*byte \d+.*{name} does not add up.*{total}"):
        tracevis3d.load(p)


# ------------------------------------------------------------------ inflation
def test_inflate_exact_is_bounded_by_the_declared_size():
    """zlib's max_length 0 means unlimited: a stream declared as 0 bytes must not inflate."""
    bomb = zlib.compress(bytes(64 << 20), 9)  # 64 MB of zeros in ~64 KB
    for declared in (0, 1, 1000):
        tracemalloc.start()
        out, why = compact._inflate_exact(bomb, declared)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert out == b"" and "does not inflate to exactly" in why
        assert peak < (1 << 20) + declared, peak  # never the 64 MB
    assert compact._inflate_exact(zlib.compress(b""), 0) == (b"", "")
    assert compact._inflate_exact(zlib.compress(b"abc"), 3) == (b"abc", "")
    assert "corrupt" in compact._inflate_exact(b"not zlib", 3)[1]


def test_section_declaring_raw_zero_with_data_is_refused(good, tmp_path):
    header, blobs = parts(good)
    for s in header["sections"]:
        if s["name"] == "args_blob":
            blobs["args_blob"] = zlib.compress(bytes(8 << 20), 9)
            s.update(raw=0, n=0, stored=len(blobs["args_blob"]), crc=zlib.crc32(blobs["args_blob"]))
    set_ints(header, blobs, "args_call", [])
    set_ints(header, blobs, "args_len", [])
    p = write(tmp_path / "zero.tv3c", header, blobs)
    with pytest.raises(TraceFormatError, match=r"zero.tv3c.*args_blob.*inflate to exactly its declared 0 bytes"):
        tracevis3d.load(p)


def test_header_declaring_zero_bytes_is_refused(good, tmp_path):
    header, blobs = parts(good)
    p = write(tmp_path / "h0.tv3c", header, blobs, hraw=0)
    with pytest.raises(TraceFormatError, match=r"h0.tv3c.*byte \d+: the header does not inflate"):
        tracevis3d.load(p)


# ------------------------------------------------------------------ expansion bounds
def test_calls_per_stored_byte(good, tmp_path):
    """A DAG that doubles at every level declares 2^24 - 1 calls in under a kilobyte."""
    header, blobs = parts(good)
    k = 24
    header.update(n_calls=(1 << k) - 1, n_nodes=k, n_edges=2 * (k - 1))
    set_ints(header, blobs, "node_func", [0] * k)
    set_ints(header, blobs, "node_nchild", [0] + [2] * (k - 1))
    set_ints(header, blobs, "node_children", [1] * (2 * (k - 1)))
    set_ints(header, blobs, "roots", [k - 1], zigzag=True)
    p = write(tmp_path / "bomb.tv3c", header, blobs)
    assert p.stat().st_size < 4096
    with pytest.raises(TraceFormatError, match=r"bomb.tv3c: .*16777215 calls.*compact_bytes_per_call=2"):
        tracevis3d.load(p)
    with pytest.raises(TraceFormatError, match=r"bomb.tv3c.*byte"):  # raised: the next check refuses it
        tracevis3d.load(p, compact_bytes_per_call=1e-6, max_events=1 << 25)


def test_depth_per_stored_byte(good, tmp_path):
    """A chain of 200 000 distinct nodes compresses to a few hundred bytes."""
    header, blobs = parts(good)
    k = 200_000
    header.update(n_calls=k, n_nodes=k, n_edges=k - 1)
    set_ints(header, blobs, "node_func", [0] * k)
    set_ints(header, blobs, "node_nchild", [0] + [1] * (k - 1))
    set_ints(header, blobs, "node_children", [1] * (k - 1))
    set_ints(header, blobs, "roots", [k - 1], zigzag=True)
    set_ints(header, blobs, "roots_per_thread", [1] + [0] * (header["n_threads"] - 1))
    p = write(tmp_path / "deep.tv3c", header, blobs)
    with pytest.raises(TraceFormatError, match=r"deep.tv3c: .*199999 levels deep.*compact_bytes_per_level=8"):
        tracevis3d.load(p)
    with pytest.raises(TraceFormatError, match=r"deep.tv3c.*byte"):  # raised: a later section is refused
        tracevis3d.load(p, compact_bytes_per_level=1e-3)


def test_header_inflation_and_metadata_items(good, tmp_path):
    header, blobs = parts(good)
    header["meta"]["pile"] = [[]] * 2_000_000  # 8 MB of JSON in a few KB
    p = write(tmp_path / "meta.tv3c", header, blobs)
    assert p.stat().st_size < 100_000
    with pytest.raises(TraceFormatError, match=r"meta.tv3c: .*header.*compact_header_ratio=10.*compact_header_slack"):
        tracevis3d.load(p)
    with pytest.raises(TraceFormatError, match=r"meta.tv3c.*more than 1000000 values.*max_meta_items="):
        tracevis3d.load(p, compact_header_ratio=1e4)
    assert len(tracevis3d.load(p, compact_header_ratio=1e4, max_meta_items=3_000_000)) > 0


def test_metadata_section_referenced_twice(good, tmp_path):
    header, blobs = parts(good)
    ref = header["meta"]["origin"]
    assert set(ref) == {"__ndarray__"}
    header["meta"]["again"] = [ref] * 1000
    p = write(tmp_path / "twice.tv3c", header, blobs)
    with pytest.raises(TraceFormatError, match=r"twice.tv3c.*refers to section 'meta__origin' more than once"):
        tracevis3d.load(p)


def test_good_file_still_loads(good):
    t = tracevis3d.load(good)
    assert len(t) > 0 and list(t.meta["origin"]) == [0, 1, 2, 3]
