"""pprof (`tracevis3d.io.pprof`, `tracevis3d.kernels.protowire`) against an independent
decoding: google.protobuf parses the same bytes with a ``Profile`` message class built here
from profile.proto's fields (a hand-made ``FileDescriptorProto``, no protoc needed), and the
stacks are made as speedscope's ``pprof.ts`` makes them, then laid out Left Heavy."""
from __future__ import annotations

import gzip
import pathlib
import random

import numpy as np
import pytest

from hostile_text_formats import field_bytes, field_varint, packed
from collapsed_twins import calls_of, left_heavy

from tracevis3d.io import load, load_bytes
from tracevis3d.model import TraceFormatError

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
FILES = [DATA / "speedscope-samples" / "pprof" / "simple.prof", DATA / "go" / "cpu.pprof", DATA / "go" / "heap.pprof"]

_FIELDS = {  # message: [(name, number, type, repeated, message type)]
    "ValueType": [("type", 1, "int64", False, None), ("unit", 2, "int64", False, None)],
    "Label": [("key", 1, "int64", False, None), ("str", 2, "int64", False, None), ("num", 3, "int64", False, None),
              ("num_unit", 4, "int64", False, None)],
    "Sample": [("location_id", 1, "uint64", True, None), ("value", 2, "int64", True, None),
               ("label", 3, "message", True, "Label")],
    "Mapping": [("id", 1, "uint64", False, None), ("memory_start", 2, "uint64", False, None),
                ("memory_limit", 3, "uint64", False, None), ("file_offset", 4, "uint64", False, None),
                ("filename", 5, "int64", False, None), ("build_id", 6, "int64", False, None),
                ("has_functions", 7, "bool", False, None), ("has_filenames", 8, "bool", False, None),
                ("has_line_numbers", 9, "bool", False, None), ("has_inline_frames", 10, "bool", False, None)],
    "Line": [("function_id", 1, "uint64", False, None), ("line", 2, "int64", False, None),
             ("column", 3, "int64", False, None)],
    "Location": [("id", 1, "uint64", False, None), ("mapping_id", 2, "uint64", False, None),
                 ("address", 3, "uint64", False, None), ("line", 4, "message", True, "Line"),
                 ("is_folded", 5, "bool", False, None)],
    "Function": [("id", 1, "uint64", False, None), ("name", 2, "int64", False, None),
                 ("system_name", 3, "int64", False, None), ("filename", 4, "int64", False, None),
                 ("start_line", 5, "int64", False, None)],
    "Profile": [("sample_type", 1, "message", True, "ValueType"), ("sample", 2, "message", True, "Sample"),
                ("mapping", 3, "message", True, "Mapping"), ("location", 4, "message", True, "Location"),
                ("function", 5, "message", True, "Function"), ("string_table", 6, "string", True, None),
                ("drop_frames", 7, "int64", False, None), ("keep_frames", 8, "int64", False, None),
                ("time_nanos", 9, "int64", False, None), ("duration_nanos", 10, "int64", False, None),
                ("period_type", 11, "message", False, "ValueType"), ("period", 12, "int64", False, None),
                ("comment", 13, "int64", True, None), ("default_sample_type", 14, "int64", False, None)],
}


@pytest.fixture(scope="module")
def Profile():
    pytest.importorskip("google.protobuf", reason="google.protobuf (requirements-dev.txt) is the decoding twin")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fd = descriptor_pb2.FileDescriptorProto(name="tv3d_test_profile.proto", package="tv3dtest.perftools.profiles",
                                            syntax="proto3")
    types = {"int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
             "uint64": descriptor_pb2.FieldDescriptorProto.TYPE_UINT64,
             "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
             "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
             "message": descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE}
    for msg, fields in _FIELDS.items():
        m = fd.message_type.add(name=msg)
        for name, num, typ, rep, sub in fields:
            f = m.field.add(name=name, number=num, type=types[typ],
                            label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED if rep else
                            descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
            if sub:
                f.type_name = f".tv3dtest.perftools.profiles.{sub}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tv3dtest.perftools.profiles.Profile"))


def naive_pprof(Profile, data: bytes, sample_type=None) -> tuple:
    """(set of (path, start, end), x unit) from google.protobuf's decoding, speedscope's reading
    (frame = name, file, start line) widened as pprof reads a location: each of its lines whose
    function is known is a frame, the last the caller of the others (inlined calls); and this
    reader's naming of a location without a function by its address."""
    p = Profile()
    p.ParseFromString(data)
    st = p.string_table
    types = [(st[v.type] or "samples", st[v.unit] or "count") for v in p.sample_type]
    names = [t for t, _ in types]
    if sample_type is None:
        dflt = st[p.default_sample_type] if p.default_sample_type else ""
        idx = names.index(dflt) if dflt in names else len(types) - 1
    else:
        idx = sample_type if isinstance(sample_type, int) else names.index(sample_type)
    unit = types[idx][1]
    scale = {"nanoseconds": 1e-3, "microseconds": 1.0, "milliseconds": 1e3, "seconds": 1e6}.get(unit)
    funcs = {f.id: (st[f.name] or "(unknown)", st[f.filename], f.start_line) for f in p.function}
    maps = {m.id: st[m.filename] for m in p.mapping}
    order: dict = {}
    loc_frame = {}
    for loc in p.location:  # every line whose function is known a frame, innermost first (inlined calls)
        keys = [funcs[line.function_id] for line in loc.line if line.function_id in funcs]
        if not keys:
            keys = [(f"0x{loc.address:x}", maps.get(loc.mapping_id, ""), -1)]
        for key in keys:
            order.setdefault(key, len(order))
        loc_frame[loc.id] = keys
    stacks = []
    for s in p.sample:
        path = tuple(key[0] for i in reversed(s.location_id) if i in loc_frame for key in reversed(loc_frame[i]))
        w = float(s.value[idx]) if len(s.value) > idx else 0.0
        stacks.append((path, w * scale if scale else w))
    name_order = {}
    for key in sorted(order, key=order.get):
        name_order.setdefault(key[0], len(name_order))
    x_unit = "µs" if scale else ("bytes" if unit == "bytes" else (types[idx][0] if unit == "count" else unit))
    return set(left_heavy(stacks, name_order)), x_unit


def _close(trace, want):
    got = {p: (s, e) for _, p, s, e in calls_of(trace)}
    exp = {p: (s, e) for p, s, e in want}
    assert got.keys() == exp.keys()
    scale = max(e for _, e in exp.values())
    for p, (s, e) in exp.items():
        assert got[p] == (pytest.approx(s, abs=1e-9 * scale), pytest.approx(e, abs=1e-9 * scale)), p


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_against_protobuf(Profile, path):
    raw = path.read_bytes()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    t = load(path, warn=False)
    want, unit = naive_pprof(Profile, data)
    assert t.meta["format"] == "pprof" and t.meta["x_unit"] == unit
    _close(t, want)


def test_every_sample_type(Profile):
    path = DATA / "go" / "heap.pprof"
    data = gzip.decompress(path.read_bytes())
    t = load(path, warn=False)
    assert t.meta["pprof_sample_types"] == ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count",
                                           "inuse_space/bytes"]
    assert t.meta["pprof_sample_type"] == "inuse_space/bytes"  # the last, as pprof
    for k, name in enumerate(["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"]):
        for opt in (k, name, str(k)):
            t = load(path, warn=False, sample_type=opt)
            want, unit = naive_pprof(Profile, data, k)
            assert t.meta["x_unit"] == unit == ("bytes" if "space" in name else name)
            _close(t, want)
    with pytest.raises(TraceFormatError, match="no sample type 'cpu': its types are alloc_objects/count"):
        load(path, sample_type="cpu")
    cpu = load(DATA / "go" / "cpu.pprof", warn=False)
    assert cpu.meta["x_unit"] == "µs" and cpu.meta["pprof_sample_type"] == "cpu/nanoseconds"
    n = load(DATA / "go" / "cpu.pprof", warn=False, sample_type="samples").meta["total_weight"]
    assert cpu.meta["total_weight"] == pytest.approx(n * cpu.meta["pprof_period"] / 1e3)  # samples × 10 ms


def _random_profile(rng: random.Random, n_samples: int = 0, deep: int = 0) -> bytes:
    """A Profile with shuffled ids, packed and unpacked repeated fields, inlined lines,
    unsymbolized locations, a default sample type and three value columns; ``n_samples``
    samples (else 1 to 60), the first of ``deep`` locations when given."""
    strings = ["", "samples", "count", "cpu", "nanoseconds", "space", "bytes", "a.go", "b.go", "lib.so"]
    fnames = [f"pkg.f{i}" for i in range(12)]
    base = len(strings)
    strings += fnames
    out = bytearray()
    for t, u in ((1, 2), (3, 4), (5, 6)):
        out += field_bytes(1, field_varint(1, t) + field_varint(2, u))
    fids = rng.sample(range(1, 1000), len(fnames))
    lids = rng.sample(range(1, 5000), 30)
    n_samples = n_samples or rng.randint(1, 60)
    for k in range(n_samples):
        locs = [rng.choice(lids) for _ in range(deep if k == 0 and deep else rng.randint(0, 8))]
        vals = [rng.randint(0, 50), rng.randint(0, 10 ** 9), rng.randint(0, 4096)]
        if rng.random() < 0.5:
            body = packed(1, locs) + packed(2, vals)
        else:
            body = b"".join(field_varint(1, x) for x in locs) + b"".join(field_varint(2, v) for v in vals)
        out += field_bytes(2, body)
    out += field_bytes(3, field_varint(1, 1) + field_varint(5, 9))
    for lid in lids:
        body = field_varint(1, lid) + field_varint(2, 1) + field_varint(3, rng.randint(0x1000, 0xFFFF))
        if rng.random() < 0.85:
            for _ in range(rng.randint(1, 3)):
                body += field_bytes(4, field_varint(1, rng.choice(fids)) + field_varint(2, rng.randint(1, 99)))
        out += field_bytes(4, body)
    for k, fid in enumerate(fids):
        out += field_bytes(5, field_varint(1, fid) + field_varint(2, base + k) + field_varint(4, 7 + k % 2) +
                           field_varint(5, k % 3))
    for s in strings:
        out += field_bytes(6, s.encode())
    if rng.random() < 0.5:
        out += field_varint(14, 3)  # default_sample_type: "cpu"
    out += field_varint(12, 10_000_000)
    return bytes(out)


@pytest.mark.parametrize("seed", range(10))
def test_random_profiles(Profile, seed):
    rng = random.Random(seed)
    data = _random_profile(rng)
    for st in (None, 0, 2):
        want, unit = naive_pprof(Profile, data, st)
        try:
            t = load_bytes(data, source="r.pb", warn=False, sample_type=st)
        except TraceFormatError as err:
            assert not any(end > start for _, start, end in want), err
            continue
        assert t.meta["x_unit"] == unit
        _close(t, want)


def test_profiles_past_every_first_capacity(Profile):
    """Past two thousand distinct samples, the first a stack of 300 locations (of up to three
    frames each): the sample walk's arrays and tables grow between its runs
    (`pprof_scan._stacks_run` stops before a sample they have no room for) and the trie is
    the twin's."""
    rng = random.Random(11)
    data = _random_profile(rng, n_samples=2100, deep=300)
    want, unit = naive_pprof(Profile, data, None)
    t = load_bytes(data, source="big.pb", warn=False)
    _close(t, want)


def test_wire_walker_against_protobuf(Profile):
    """protowire's field rows match what google.protobuf reads (a random profile)."""
    from tracevis3d.kernels import protowire as pw

    data = _random_profile(random.Random(77))
    buf = np.frombuffer(data, np.uint8)
    code, _, owner, num, wt, val, ln = pw.scan_fields(buf, np.zeros(1, np.int64), np.array([buf.size]))
    assert code == pw.OK
    p = Profile()
    p.ParseFromString(data)
    assert int((num == 2).sum()) == len(p.sample) and int((num == 6).sum()) == len(p.string_table)
    rows = np.flatnonzero(num == 2)
    code, _, o2, n2, w2, v2, l2 = pw.scan_fields(buf, val[rows].astype(np.int64), (val[rows] + ln[rows]).astype(np.int64))
    code, _, ptr, ids = pw.repeated_varints(buf, o2, n2, w2, v2, l2, rows.size, 1)
    assert [list(ids[ptr[k]:ptr[k + 1]]) for k in range(rows.size)] == [list(s.location_id) for s in p.sample]


def test_gzip_wrapped_and_sniffed():
    raw = (DATA / "go" / "cpu.pprof").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    t1 = load_bytes(raw, source="cpu.pprof", warn=False)
    t2 = load_bytes(gzip.decompress(raw), source="cpu.pprof", warn=False)
    assert t1.meta["format"] == t2.meta["format"] == "pprof" and calls_of(t1) == calls_of(t2)
