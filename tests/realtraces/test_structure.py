"""The compact DAG (kernels/dag.py, analysis/structure.py) and the compact file (io/compact.py):
DAG against a brute-force canonical form, exact round trips (hypothesis forests, synthetic
traces, real traces), hostile compact files refused with a position."""
import json
import struct
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracevis3d
from tracevis3d.io import compact
from tracevis3d.model import ARRAY_DTYPES, STRING_TABLES, Trace, TraceFormatError

from tree_factory import random_trace
from tree_strategies import forest, ops_strategy


def canonical_forms(t: Trace) -> list:
    """Brute force: the nested tuple (func, (child forms...)) of every call, no hashing, no ids."""
    forms = [None] * len(t)
    for i in range(len(t) - 1, -1, -1):
        kids = []
        c = i + 1
        while c < t.end_index[i]:
            kids.append(forms[c])
            c = t.end_index[c]
        forms[i] = (int(t.func[i]), tuple(kids))
    return forms


def assert_same_trace(a: Trace, b: Trace):
    for k, dt in ARRAY_DTYPES.items():
        x, y = getattr(a, k), getattr(b, k)
        assert y.dtype == dt and x.shape == y.shape, k
        assert x.tobytes() == y.tobytes(), f"{k} differs"
    for k in STRING_TABLES:
        assert getattr(a, k) == getattr(b, k), k
    assert [tuple(p) for p in a.function_paths] == list(b.function_paths)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, ticks=st.booleans(), threads=st.integers(1, 3))
def test_dag_equals_brute_force_and_round_trips(ops, ticks, threads, tmp_path_factory):
    t = forest(ops, ticks, threads)
    s = tracevis3d.structure(t)
    forms = canonical_forms(t)
    assert s.n_distinct_subtrees == len(set(forms))
    # equal node ids exactly when the subtrees are equal (threads share nodes)
    ids = {}
    for i, f in enumerate(forms):
        assert ids.setdefault(f, int(s.node[i])) == s.node[i]
    assert int(s.node_size[s.node].sum()) == int(t.subtree_size.sum())
    p = tmp_path_factory.mktemp("ctf") / "t.tv3c"
    tracevis3d.save(t, p, format="compact")
    assert_same_trace(t, tracevis3d.load(p))


def test_structure_fields_on_a_repetitive_trace():
    t = random_trace(n_roots=40, fanout=3, max_depth=4, threads=3, seed=3, n_func=2)
    s = tracevis3d.structure(t)
    assert s.n_calls == len(t) and s.sharing_ratio == pytest.approx(len(t) / s.n_distinct_subtrees)
    assert s.n_distinct_subtrees < len(t) / 3
    for k in range(s.n_distinct_subtrees):
        assert np.all(s.children(k) < k)  # stored children first
        i = s.node_first[k]
        assert s.node[i] == k and t.func[i] == s.node_func[k] and t.subtree_size[i] == s.node_size[k]
    top = s.top_repeated(3)
    assert top and top[0]["count"] >= 2 and top[0]["calls"] == top[0]["size"] * top[0]["count"]
    assert "distinct subtrees" in s.summary()


@pytest.mark.parametrize("seed", [0, 1])
def test_round_trip_synthetic_with_objects_args_meta(tmp_path, seed):
    t = tracevis3d.synthetic(3000, threads=2, seed=seed, sync=True)
    p = tmp_path / "s.tv3c"
    tracevis3d.save(t, p, format="compact")
    u = tracevis3d.load(p)
    assert_same_trace(t, u)
    for k, v in t.meta.items():  # numpy arrays inside meta survive as arrays
        if isinstance(v, np.ndarray):
            assert np.array_equal(v, u.meta[k]) and v.dtype == u.meta[k].dtype


REAL = ["viztracer-examples/different_sorts.json", "viztracer-examples/function_args_return.json",
        "viztracer-examples/multi_process_pool.json", "catapult/flow.json", "catapult/big_trace.json",
        "catapult/nanoseconds.json", "hta-trace-diff/control.json.gz"]


@pytest.mark.parametrize("name", REAL)
def test_round_trip_real_traces(realdata, tmp_path, name):
    t = tracevis3d.load(realdata / name)
    p = tmp_path / "r.tv3c"
    tracevis3d.save(t, p, format="compact")
    u = tracevis3d.load(p)
    assert_same_trace(t, u)
    assert u.meta == json.loads(json.dumps(t.meta, default=str)) or u.meta.keys() == t.meta.keys()
    s = tracevis3d.structure(t)
    assert len(set(canonical_forms(t))) == s.n_distinct_subtrees if len(t) < 30000 else True
    native = tmp_path / "r.npz"
    tracevis3d.save(t, native)
    assert p.stat().st_size < native.stat().st_size


# ------------------------------------------------------------------ hostile files
def _write(path, header: dict, blobs: list[bytes]):
    raw = json.dumps(header).encode()
    hz = zlib.compress(raw)
    path.write_bytes(compact.MAGIC + struct.pack("<IQQ", compact.VERSION, len(hz), len(raw)) + hz + b"".join(blobs))


def _parts(path):
    data = path.read_bytes()
    n0 = len(compact.MAGIC) + 20
    _, hs, hr = struct.unpack("<IQQ", data[len(compact.MAGIC):n0])
    header = json.loads(zlib.decompress(data[n0:n0 + hs]))
    blobs, at = {}, n0 + hs
    for s in header["sections"]:
        blobs[s["name"]] = data[at: at + s["stored"]]
        at += s["stored"]
    return header, blobs


@pytest.fixture
def good_file(tmp_path):
    t = random_trace(n_roots=6, fanout=2, max_depth=3, threads=2, seed=5, n_func=3)
    p = tmp_path / "good.tv3c"
    tracevis3d.save(t, p, format="compact")
    return p


def test_hostile_truncated_and_corrupt(good_file, tmp_path):
    data = good_file.read_bytes()
    for cut in (5, 20, len(data) // 2, len(data) - 1):
        bad = tmp_path / f"cut{cut}.tv3c"
        bad.write_bytes(data[:cut])
        with pytest.raises(TraceFormatError, match=r"cut{}\.tv3c.*(byte|magic)".format(cut)):
            tracevis3d.load(bad)
    header, _ = _parts(good_file)
    for k in range(len(data) - sum(s["stored"] for s in header["sections"]), len(data), 97):
        flipped = bytearray(data)  # every section is checked: raw planes too
        flipped[k] ^= 0xFF
        bad = tmp_path / "flip.tv3c"
        bad.write_bytes(bytes(flipped))
        with pytest.raises(TraceFormatError, match=r"flip.tv3c.*(CRC-32|corrupt|inflate)"):
            tracevis3d.load(bad)


def test_hostile_newer_version(good_file):
    data = bytearray(good_file.read_bytes())
    data[len(compact.MAGIC)] = 99
    good_file.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError, match="newer TraceVis3D"):
        tracevis3d.load(good_file)


def _ints(values, delta=False, zigzag=False):
    w = compact._Writer()
    w.ints("x", np.asarray(values, np.int64), delta=delta, zigzag=zigzag)
    w.finish()
    return w.sections[0], w.blobs[0]


def test_hostile_dag_bomb_and_cycles(good_file, tmp_path):
    """A DAG whose node k has two children k-1 expands to 2^16 calls: refused before expanding;
    a child that points forward (a cycle) is refused naming the node."""
    header, blobs = _parts(good_file)
    k = 17  # 32 edges: fits the 35 calls the file declares, expands to 2^17 - 1
    secs = {s["name"]: s for s in header["sections"]}
    new = {"node_func": _ints([0] * k), "node_nchild": _ints([0] + [2] * (k - 1)),
           "node_children": _ints([1] * (2 * (k - 1))), "roots": _ints([k - 1], zigzag=True),
           "roots_per_thread": _ints([1] + [0] * (header["n_threads"] - 1))}
    header.update(n_nodes=k, n_edges=2 * (k - 1))
    for name, (desc, blob) in new.items():
        desc["name"] = name
        secs[name] = desc
        blobs[name] = blob
    header["sections"] = [secs[s["name"]] for s in header["sections"]]
    bomb = tmp_path / "bomb.tv3c"
    _write(bomb, header, [blobs[s["name"]] for s in header["sections"]])
    with pytest.raises(TraceFormatError, match=r"bomb.tv3c.*byte \d+.*roots expand to more than"):
        tracevis3d.load(bomb)
    # a forward child: node 1's child is node 1 + 1 (k - child = -1 is not allowed)
    desc, blob = _ints([-1] * (2 * (k - 1)), zigzag=True)
    desc["name"] = "node_children"
    secs["node_children"] = desc
    blobs["node_children"] = blob
    header["sections"] = [secs[s["name"]] for s in header["sections"]]
    cyc = tmp_path / "cycle.tv3c"
    _write(cyc, header, [blobs[s["name"]] for s in header["sections"]])
    with pytest.raises(TraceFormatError, match=r"cycle.tv3c.*byte \d+"):
        tracevis3d.load(cyc)


def test_hostile_huge_declared_counts(good_file, tmp_path):
    header, blobs = _parts(good_file)
    header["n_calls"] = 10 ** 12
    p = tmp_path / "huge.tv3c"
    _write(p, header, [blobs[s["name"]] for s in header["sections"]])
    with pytest.raises(TraceFormatError, match="max_events"):
        tracevis3d.load(p)
    header, blobs = _parts(good_file)
    for s in header["sections"]:
        if s["name"] == "obj_ids":
            s["n"] = 10 ** 15  # width 0: nothing to inflate, but it would allocate 8 PB
    p = tmp_path / "objs.tv3c"
    _write(p, header, [blobs[s["name"]] for s in header["sections"]])
    with pytest.raises(TraceFormatError, match=r"objs.tv3c.*obj_ids"):
        tracevis3d.load(p)


def test_hostile_meta_npy_claims_more_than_it_holds(tmp_path):
    t = random_trace(n_roots=2, fanout=2, max_depth=2, threads=1, seed=1)
    t.meta["origin"] = np.arange(5)
    p = tmp_path / "m.tv3c"
    tracevis3d.save(t, p, format="compact")
    header, blobs = _parts(p)
    name = "meta__origin"
    import io

    from numpy.lib import format as npformat

    f = io.BytesIO()
    npformat.write_array_header_1_0(f, {"descr": "<i8", "fortran_order": False, "shape": (10 ** 12,)})
    raw = f.getvalue() + np.arange(5).tobytes()
    for s in header["sections"]:
        if s["name"] == name:
            blobs[name] = zlib.compress(raw)
            s["stored"], s["raw"], s["crc"] = len(blobs[name]), len(raw), zlib.crc32(blobs[name])
    _write(p, header, [blobs[s["name"]] for s in header["sections"]])
    with pytest.raises(TraceFormatError, match=r"m.tv3c.*meta__origin.*does not match"):
        tracevis3d.load(p)
