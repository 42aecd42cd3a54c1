"""The compact TraceVis3D file: SEAT's Compact Trace Format, lossless.

SEAT (Hamou-Lhadj, Sec. 2.9 and ch. 5) stores a trace as the DAG of its distinct
subtrees.  This file stores that DAG (`kernels.dag.subtree_dag`: function + ordered
child nodes per node, children first) and the root node of every top-level call, from
which func, parent, depth, end_index and thread of every call follow; the per-call
times and everything else of the `Trace` are stored beside it, compactly:

- integers as zig-zag varying-width byte planes (value k of width w bytes is split into
  w planes, one per byte, so that zlib sees runs of zeros; a plane that zlib cannot shrink,
  like the random low bytes of float times, is stored as is), delta-encoded where values
  grow (sorted indices, tick times);
- times as int64 ticks when every start and end is exactly ``ticks / scale`` for one of
  the scales 1, 10^3, 10^6 (µs, ns, ps: the usual clocks), start delta-encoded in
  pre-order and end as duration; otherwise as float64 bit patterns XORed with the
  previous start (start) or with the call's own start (end) -- exact either way;
- the tables and metadata as one zlib-compressed JSON header, metadata arrays as
  ``.npy`` bytes (never pickles).

Layout: ``MAGIC`` (12 bytes), ``<I`` version, ``<Q`` stored and ``<Q`` raw size of the
header, the header, then the sections in header order.  Loading (`load_compact`) trusts
nothing: every size is checked before anything is inflated (inflation is bounded by the
declared size), the DAG is checked node by node before it is expanded (children must be
earlier nodes, sizes saturate so a "DAG bomb" is refused), at most ``max_events`` calls
are expanded, and the result passes the same validation as a native file
(`native.validate_trace`).  Errors are `TraceFormatError` naming the file, the section
and its byte offset; every section carries a CRC-32 of its stored bytes.

Over 600 lines: the compact DAG format, its reader, writer and their bounds, one topic.
"""
from __future__ import annotations

import json
import os
import struct
import zlib

import numpy as np

from ..model import ARRAY_DTYPES, STRING_TABLES, Trace, TraceFormatError
from ..model_side import ADDED_TABLES, OPTIONAL_ARRAYS, OPTIONAL_TABLES
from .atomic import replaced_whole
from .formats import COMPACT_MAGIC as MAGIC
from .limits import Limits, resolve_limits

FORMAT = "tracevis3d-compact"
VERSION = 1
LEVEL = 3  # zlib level: on traces 3 is ~1.4x the speed of 6 for 1 % more bytes
_PRE = struct.Struct("<IQQ")
_TICK_SCALES = (1.0, 1e3, 1e6)
_MAX_I = {np.dtype(k): (np.iinfo(k).min, np.iinfo(k).max) for k in
          (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)}

__all__ = ["save_compact", "load_compact", "MAGIC", "FORMAT", "VERSION"]


# ----------------------------------------------------------------- encoding
def _planes(u: np.ndarray) -> tuple[int, bytes]:
    """uint64 values as ``w`` byte planes (w = bytes of the largest value)."""
    if u.size == 0:
        return 0, b""
    w = (int(u.max()).bit_length() + 7) // 8
    if w == 0:
        return 0, b""
    return w, np.ascontiguousarray(u.view(np.uint8).reshape(-1, 8)[:, :w].T).tobytes()


PROBE = 1 << 16  # bytes of a plane test-compressed to decide whether zlib pays


def _plane_job(plane) -> tuple[int, bytes]:
    """(mode, stored bytes) of one plane: zlib, or as is when its first `PROBE` bytes do
    not shrink by 3 % (the random low bytes of float times: zlib would only spend time)."""
    probe = bytes(plane[:PROBE])
    if len(zlib.compress(probe, 1)) > 0.97 * len(probe):
        return 0, bytes(plane)
    return 1, zlib.compress(plane, LEVEL)


def _compress_all(jobs: list) -> list:
    """Compress the planes and blobs in ``jobs`` (memoryviews; zlib releases the GIL, so
    two threads halve the time on two cores); results in order."""
    if len(jobs) < 4 or sum(len(j) for j in jobs) < (4 << 20):
        return [_plane_job(j) for j in jobs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as ex:
        return list(ex.map(_plane_job, jobs))


def _zigzag(v: np.ndarray) -> np.ndarray:
    v = v.astype(np.int64, copy=False)
    return (v.view(np.uint64) << np.uint64(1)) ^ (v >> np.int64(63)).view(np.uint64)


def _unzigzag(z: np.ndarray) -> np.ndarray:
    return ((z >> np.uint64(1)) ^ (np.uint64(0) - (z & np.uint64(1)))).view(np.int64)


class _Writer:
    """Sections described now, compressed together at the end (`finish`)."""

    def __init__(self):
        self.sections: list[dict] = []
        self.blobs: list[bytes] = []
        self._pending: list = []  # (section, [memoryview of each plane] or None, raw bytes)

    def put(self, name: str, data: bytes, **desc):
        sec = dict(name=name, raw=len(data), **desc)
        if "w" in desc and desc.get("n"):  # byte planes: one stream per plane
            n = desc["n"]
            mv = memoryview(data)
            self._pending.append((sec, [mv[k * n:(k + 1) * n] for k in range(desc["w"])], data))
        else:
            self._pending.append((sec, None, data))
        self.sections.append(sec)

    def finish(self) -> None:
        jobs = []
        for sec, planes, data in self._pending:
            jobs.extend(planes if planes is not None else [memoryview(data)])
        done = iter(_compress_all(jobs))
        for sec, planes, data in self._pending:
            if planes is not None:
                parts = [next(done) for _ in planes]
                sec["planes"] = [[mode, len(b)] for mode, b in parts]
                stored = b"".join(b for _, b in parts)
            else:
                mode, stored = next(done)
                if mode == 0:  # incompressible blob: still a zlib stream (level 0 costs nothing)
                    stored = zlib.compress(data, 0)
            sec["stored"], sec["crc"] = len(stored), zlib.crc32(stored)
            self.blobs.append(stored)
        self._pending = []

    def ints(self, name: str, a, delta: bool = False, zigzag: bool = True):
        a = np.asarray(a)
        v = a.astype(np.int64, copy=False).view(np.uint64) if a.dtype != np.uint64 else a
        if delta:
            v = np.diff(v, prepend=np.uint64(0))
        if zigzag:
            v = _zigzag(v.view(np.int64))
        w, data = _planes(np.ascontiguousarray(v, np.uint64))
        self.put(name, data, codec="int", n=int(a.shape[0]), w=w, delta=delta, zigzag=zigzag,
                 dtype=a.dtype.str)

    def floats(self, name: str, a):
        """float64 bit patterns, each XORed with the previous one."""
        b = np.ascontiguousarray(a, np.float64).view(np.uint64)
        x = b ^ np.concatenate([np.zeros(1, np.uint64), b[:-1]]) if b.size else b
        w, data = _planes(x)
        self.put(name, data, codec="f64x", n=int(b.shape[0]), w=w)

    def raw(self, name: str, a: np.ndarray):
        self.put(name, np.ascontiguousarray(a, np.uint8).tobytes(), codec="bytes", n=int(a.shape[0]))

    def npy(self, name: str, a: np.ndarray):
        import io

        f = io.BytesIO()
        np.save(f, np.ascontiguousarray(a), allow_pickle=False)
        self.put(name, f.getvalue(), codec="npy")


def _tick_scale(start: np.ndarray, end: np.ndarray) -> float | None:
    """The smallest scale s in 1, 1e3, 1e6 with every time exactly rint(t·s)/s (bit for bit)."""
    for s in _TICK_SCALES:
        ok = True
        for a in (start, end):
            t = np.rint(a * s)
            if a.size and (not np.all(np.abs(t) < 2.0 ** 53)
                           or not np.array_equal((t / s).view(np.uint64), a.view(np.uint64))):
                ok = False
                break
        if ok:
            return s
    return None


def save_compact(trace: Trace, path, structure=None) -> dict:
    """Write ``trace`` as a compact file (atomic replace).  Returns the header written
    (sizes of every section, the time codec, the DAG size)."""
    from ..analysis.structure import structure_of
    from .native import json_default, meta_out

    path = os.fspath(path)
    st = structure if structure is not None else structure_of(trace)
    w = _Writer()
    nptr = st.node_ptr
    w.ints("node_func", st.node_func, zigzag=False)
    w.ints("node_nchild", np.diff(nptr) - 1, zigzag=False)
    is_child = np.ones(st.node_keys.shape[0], bool)
    is_child[nptr[:-1]] = False
    owner = np.repeat(np.arange(st.n_distinct_subtrees, dtype=np.int64), np.diff(nptr) - 1)
    w.ints("node_children", owner - st.node_keys[is_child], zigzag=False)  # k - child > 0
    w.ints("roots", st.roots)
    w.ints("roots_per_thread", st.roots_per_thread, zigzag=False)
    scale = _tick_scale(trace.start, trace.end)
    if scale is not None:
        ts = np.rint(trace.start * scale).astype(np.int64)
        te = np.rint(trace.end * scale).astype(np.int64)
        w.ints("start", ts, delta=True)
        w.ints("duration", te - ts)
        time = {"codec": "ticks", "scale": scale}
    else:
        sb = trace.start.view(np.uint64)
        w.floats("start", trace.start)
        xs, data = _planes(trace.end.view(np.uint64) ^ sb)
        w.put("end", data, codec="f64x_start", n=len(trace), w=xs)
        time = {"codec": "xor"}
    w.ints("kind", trace.kind, zigzag=False)
    w.ints("obj_count", np.diff(trace.obj_ptr), zigzag=False)
    w.ints("obj_ids", trace.obj_ids)
    w.ints("args_call", trace.args_call, delta=True)
    w.ints("args_len", np.diff(trace.args_ptr), zigzag=False)
    w.raw("args_blob", trace.args_blob)
    for k in ("flow_id", "flow_from", "flow_to", "flow_cat", "instant_name", "instant_thread", "instant_scope",
              "instant_pid", "thread_pid", "thread_tid", "thread_sort", "function_lines"):
        w.ints(k, getattr(trace, k))
    w.floats("instant_ts", trace.instant_ts)
    for k in OPTIONAL_ARRAYS:  # counters and async slices (files without them load them empty)
        a = getattr(trace, k)
        if a.dtype == np.float64:
            w.floats(k, a)
        else:
            w.ints(k, a, delta=k in ("counter_series", "async_track"))
    meta_arrays: dict = {}
    meta = meta_out(trace.meta, "meta", meta_arrays)
    for k, a in meta_arrays.items():
        w.npy(k, a)
    header = {
        "format": FORMAT, "version": VERSION, "n_calls": len(trace), "n_threads": trace.n_threads,
        "n_nodes": st.n_distinct_subtrees, "n_edges": st.n_dag_edges, "time": time,
        "tables": {k: list(getattr(trace, k)) for k in STRING_TABLES},
        "function_paths": [list(p) for p in trace.function_paths],
        "meta": meta, "sections": w.sections,
    }
    w.finish()
    hraw = json.dumps(header, default=json_default).encode("utf-8")
    hz = zlib.compress(hraw, 9)
    with replaced_whole(path) as tmp, open(tmp, "wb") as f:
        f.write(MAGIC + _PRE.pack(VERSION, len(hz), len(hraw)) + hz)
        for b in w.blobs:
            f.write(b)
    header["file_bytes"] = os.path.getsize(path)
    return header


# ----------------------------------------------------------------- decoding
class _Reader:
    """The sections of a compact file, each inflated at most to its declared size."""

    def __init__(self, data, source: str, header: dict, body_at: int, budget: int):
        self.data, self.source, self.budget = data, source, budget
        self.sec: dict[str, tuple[dict, int]] = {}
        at = body_at
        sections = header.get("sections")
        if not isinstance(sections, list):
            self.bad("header 'sections' is not a list", body_at)
        for s in sections:
            if not isinstance(s, dict) or not isinstance(s.get("name"), str):
                self.bad("a section description is not an object with a name", body_at)
            for key in ("stored", "raw"):
                if not _is_int(s.get(key)) or s[key] < 0:
                    self.bad(f"section {s['name']!r}: {key} size {s.get(key)!r} is not a size", at)
            if s["name"] in self.sec:
                self.bad(f"section {s['name']!r} appears twice", at)
            self.sec[s["name"]] = (s, at)
            at += s["stored"]
        if at != len(data):
            self.bad(f"the sections end at byte {at} but the file has {len(data)} bytes", min(at, len(data)))

    def bad(self, msg: str, at: int):
        raise TraceFormatError(f"{self.source}: damaged compact TraceVis3D file at byte {at}: {msg}")

    def _inflate(self, name: str, codec: str, expect_raw: int | None = None, charge: int = 0) -> tuple[dict, bytes]:
        if name not in self.sec:
            self.bad(f"no section {name!r}", len(self.data))
        s, at = self.sec[name]
        if s.get("codec") != codec:
            self.bad(f"section {name!r} has codec {s.get('codec')!r}, expected {codec!r}", at)
        raw = s["raw"]
        if expect_raw is not None and raw != expect_raw:
            self.bad(f"section {name!r} declares {raw} bytes, its shape needs {expect_raw}", at)
        cost = max(raw, charge)  # what decoding allocates, not only what inflates
        if cost > self.budget:
            self.bad(f"section {name!r} needs {cost} bytes, over what this file may decode to "
                     f"({self.budget} left; max_bytes= / max_gzip_ratio= / max_events= to allow more)", at)
        self.budget -= cost
        if zlib.crc32(self.data[at: at + s["stored"]]) != s.get("crc"):
            self.bad(f"section {name!r} is damaged (CRC-32 mismatch)", at)
        if "planes" in s:
            return s, self._planes(name, s, at)
        return s, self._inflate_one(name, at, s["stored"], raw, at)

    def _inflate_one(self, name: str, start: int, stored: int, raw: int, at: int) -> bytes:
        out, why = _inflate_exact(self.data[start: start + stored], raw)
        if why:
            self.bad(f"section {name!r} (its stream at byte {start}) {why}", at)
        return out

    def _planes(self, name: str, s: dict, at: int) -> bytes:
        n, w, planes = s.get("n"), s.get("w"), s["planes"]
        if not isinstance(planes, list) or len(planes) != w or not all(
                isinstance(p, list) and len(p) == 2 and p[0] in (0, 1) and _is_int(p[1]) and p[1] >= 0
                for p in planes) or sum(p[1] for p in planes) != s["stored"]:
            self.bad(f"section {name!r}: its plane table does not describe its {s['stored']} bytes", at)
        out, pos = [], at
        for mode, stored in planes:
            if mode == 0:
                if stored != n:
                    self.bad(f"section {name!r}: a stored plane of {stored} bytes, expected {n}", pos)
                out.append(bytes(self.data[pos: pos + n]))
            else:
                out.append(self._inflate_one(name, pos, stored, n, at))
            pos += stored
        return b"".join(out)

    def ints(self, name: str, n: int, dtype) -> np.ndarray:
        s, at = self.sec.get(name, ({}, len(self.data)))
        if s.get("n") != n or not _is_int(s.get("w")) or not 0 <= s["w"] <= 8:
            self.bad(f"section {name!r} holds {s.get('n')!r} values of width {s.get('w')!r}, "
                     f"expected {n} values of width 0..8", at)
        s, out = self._inflate(name, "int", n * s["w"], 16 * n)
        u = _unplanes(out, n, s["w"])
        v = _unzigzag(u) if s.get("zigzag") else u.view(np.int64)
        if s.get("delta"):
            v = np.cumsum(v.view(np.uint64), dtype=np.uint64).view(np.int64)  # wraps like the encoder
        dt = np.dtype(dtype)
        lo, hi = _MAX_I[dt]
        if v.size and (v.min() < lo or (v.max() > hi)) or (not s.get("zigzag") and dt.kind == "i"
                                                          and v.size and v.min() < 0):
            self.bad(f"section {name!r} holds values outside {dt}", at)
        return v.astype(dt)

    def floats(self, name: str, n: int, codec: str = "f64x") -> np.ndarray:
        """float64 bit patterns (uint64): XOR-accumulated for ``f64x``; as stored (XORed
        with the call's start, which the caller undoes) for ``f64x_start``."""
        s, at = self.sec.get(name, ({}, len(self.data)))
        if s.get("n") != n or not _is_int(s.get("w")) or not 0 <= s["w"] <= 8:
            self.bad(f"section {name!r} holds {s.get('n')!r} values of width {s.get('w')!r}, "
                     f"expected {n} of width 0..8", at)
        s, out = self._inflate(name, codec, n * s["w"], 16 * n)
        u = _unplanes(out, n, s["w"])
        return np.bitwise_xor.accumulate(u) if codec == "f64x" and n else u

    def raw(self, name: str, n: int) -> np.ndarray:
        s, at = self.sec.get(name, ({}, len(self.data)))
        if s.get("n") != n:
            self.bad(f"section {name!r} holds {s.get('n')!r} bytes, expected {n}", at)
        return np.frombuffer(self._inflate(name, "bytes", n)[1], np.uint8).copy()

    def npy(self, name: str) -> np.ndarray:
        """A metadata array from .npy bytes: header read first, its shape × itemsize must
        be exactly the bytes that follow (numpy's loader would allocate first)."""
        import io

        from numpy.lib import format as npformat

        _, out = self._inflate(name, "npy")
        f = io.BytesIO(out)
        at = self.sec[name][1]
        try:
            major, _minor = npformat.read_magic(f)
            reader = npformat.read_array_header_1_0 if major == 1 else npformat.read_array_header_2_0
            shape, fortran, dtype = reader(f)
        except ValueError as e:
            self.bad(f"section {name!r} is not a .npy array: {e}", at)
        if dtype.hasobject:
            self.bad(f"section {name!r} holds Python objects (refused)", at)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        body = out[f.tell():]
        if count < 0 or count * dtype.itemsize != len(body):
            self.bad(f"section {name!r}: array of shape {shape} does not match its {len(body)} bytes", at)
        a = np.frombuffer(body, dtype).reshape(shape, order="F" if fortran else "C")
        return np.array(a)


def _inflate_exact(stored, raw: int) -> tuple[bytes, str]:
    """The zlib stream ``stored`` inflated, never to more than ``raw`` + 1 bytes (zlib's
    ``max_length`` 0 means *unlimited*, so a declared size of 0 is asked as 1), and
    ``(bytes, "")`` only when it is exactly ``raw`` bytes and nothing follows it;
    otherwise ``(b"", why)``."""
    d = zlib.decompressobj()
    try:
        out = d.decompress(bytes(stored), raw + 1)
    except zlib.error as e:
        return b"", f"is a corrupt zlib stream: {e}"
    if len(out) != raw or not d.eof or d.unconsumed_tail or d.unused_data:
        return b"", f"does not inflate to exactly its declared {raw} bytes"
    return out, ""


def _exact_total(a: np.ndarray, cap: int) -> int:
    """Σ a (non-negative integers) in exact arithmetic, or ``cap + 1`` when it is over
    ``cap`` (or a value is negative: -1).  numpy's int64 sum wraps silently (a child-count
    table summing to 2^64 + the edge count once made ``np.repeat`` write out of bounds);
    here every partial sum is checked: each value is at most ``cap`` < 2^62, so the first
    partial sum over ``cap`` is still below 2^63 and cannot have wrapped."""
    if a.size == 0:
        return 0
    a = a.astype(np.int64, copy=False)
    if a.min() < 0:
        return -1
    if int(a.max()) > cap:
        return cap + 1
    if int(a.max()) * a.size < (1 << 63):
        total = int(a.sum())
        return total if total <= cap else cap + 1
    c = np.cumsum(a)
    return cap + 1 if (c > cap).any() or (c < 0).any() else int(c[-1])


def _unplanes(out: bytes, n: int, w: int) -> np.ndarray:
    u = np.zeros((n, 8), np.uint8)
    if w:
        u[:, :w] = np.frombuffer(out, np.uint8).reshape(w, n).T
    return u.view(np.uint64).reshape(n)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def is_compact(head: bytes) -> bool:
    return bytes(head[: len(MAGIC)]) == MAGIC


def load_compact(data, *, source: str = "<compact>", limits: Limits | None = None, **_common) -> Trace:
    """Read the bytes of a compact file into a validated `Trace` (module docstring); the format
    table's loader (the options every loader takes have no use here)."""
    lim = resolve_limits(limits)
    try:
        return _load(memoryview(data), source, lim)
    except (TraceFormatError, MemoryError):
        raise
    except Exception as e:  # json/numpy on damaged input
        raise TraceFormatError(f"{source}: damaged compact TraceVis3D file: {type(e).__name__}: {e}") from None


def _load(data, source: str, lim: Limits) -> Trace:
    from ..kernels.dag import DAG_ERRORS, dag_node_sizes, expand_dag
    from .native import check_text, meta_in, validate_trace

    def bad(msg, at=0):
        raise TraceFormatError(f"{source}: damaged compact TraceVis3D file at byte {at}: {msg}")

    n_pre = len(MAGIC) + _PRE.size
    if bytes(data[: len(MAGIC)]) != MAGIC:
        raise TraceFormatError(f"{source}: not a compact TraceVis3D file (no magic at byte 0)")
    if len(data) < n_pre:
        bad("the file is cut short inside its first bytes", len(data))
    version, hstored, hraw = _PRE.unpack(bytes(data[len(MAGIC): n_pre]))
    if version > VERSION:
        raise TraceFormatError(f"{source}: written by a newer TraceVis3D (compact file version {version}, "
                               f"this one reads up to {VERSION})")
    budget = lim.inflate_limit(len(data))
    if n_pre + hstored > len(data):
        bad(f"the header ({hstored} bytes) runs past the end of the file", n_pre)
    hcap = lim.compact_header_bytes(hstored)
    if hraw > hcap:
        raise TraceFormatError(
            f"{source}: the compact file's header declares {hraw} bytes inflated from {hstored}, over the "
            f"limit of {hcap} (compact_header_ratio={lim.compact_header_ratio:g} times its stored size plus "
            f"compact_header_slack={lim.compact_header_slack}; raise either to allow more)")
    hbytes, why = _inflate_exact(data[n_pre: n_pre + hstored], hraw)
    if why:
        bad(f"the header {why}", n_pre)
    header = json.loads(hbytes.decode("utf-8"))
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        bad(f"the header is not a {FORMAT} header", n_pre)
    counts = {}
    for k in ("n_calls", "n_threads", "n_nodes", "n_edges"):
        if not _is_int(header.get(k)) or header[k] < 0:
            bad(f"header {k} {header.get(k)!r} is not a count", n_pre)
        counts[k] = header[k]
    n, nt, nk, ne = counts["n_calls"], counts["n_threads"], counts["n_nodes"], counts["n_edges"]
    if n > lim.max_events:
        raise TraceFormatError(f"{source}: the compact file holds {n} calls, over the limit of "
                               f"{lim.max_events} (max_events= to allow more)")
    if n > lim.compact_calls(len(data)):
        raise TraceFormatError(
            f"{source}: the compact file declares {n} calls in {len(data)} bytes, over the limit of "
            f"{lim.compact_calls(len(data))} (compact_bytes_per_call={lim.compact_bytes_per_call:g}: one call "
            f"per this many bytes plus 1 M; a smaller value allows more)")
    if nk > n or ne > n:
        bad(f"header counts are impossible for {n} calls (nodes {nk}, edges {ne})", n_pre)
    tables = header.get("tables")
    if not isinstance(tables, dict):
        bad("header 'tables' is not an object", n_pre)
    long_cap = lim.max_name_chars + 9

    def text_bad(msg):
        bad(msg, n_pre)
    text = {}
    for k in STRING_TABLES:
        v = tables.get(k)
        if v is None and k in OPTIONAL_TABLES + ADDED_TABLES:  # a file from before counters, async slices
            # or the flows' categories
            v = []
        if not isinstance(v, list):
            bad(f"header table {k!r} is not a list", n_pre)
        for j, x in enumerate(v):
            check_text(x, f"header table {k!r} entry {j}", long_cap, text_bad)
        text[k] = list(v)
    paths = header.get("function_paths")
    if not isinstance(paths, list) or not all(isinstance(p, list) for p in paths):
        bad("header 'function_paths' is not a list of lists", n_pre)
    for j, pth in enumerate(paths):
        for x in pth:
            check_text(x, f"header function_paths entry {j}", long_cap, text_bad)
    nf = len(text["function_names"])
    # per-call sections are bounded by max_events; the others by the inflation budget
    r = _Reader(data, source, header, n_pre + hstored, budget + 256 * (n + 1))
    node_func = r.ints("node_func", nk, np.int32)
    nchild = r.ints("node_nchild", nk, np.int64)
    if _exact_total(nchild, ne) != ne:
        bad(f"node_nchild does not add up to the {ne} edges the header declares", r.sec["node_nchild"][1])
    back = r.ints("node_children", ne, np.int64)
    owner = np.repeat(np.arange(nk, dtype=np.int64), nchild)
    children = owner - back
    node_ptr = np.zeros(nk + 1, np.int64)
    node_ptr[1:] = np.cumsum(nchild + 1)
    keys = np.empty(nk + ne, np.int64)
    keys[node_ptr[:-1]] = node_func
    is_child = np.ones(nk + ne, bool)
    is_child[node_ptr[:-1]] = False
    keys[is_child] = np.where((children >= 0) & (children < nk), children, -1)
    keys = keys.astype(np.int32)  # function ids were checked as int32, children are -1 or < nk
    size, height, code, k_bad = dag_node_sizes(node_ptr, keys, max(nf, 1), max(n, 1))
    if code:
        bad(f"DAG node {k_bad}: {DAG_ERRORS[code]}", r.sec["node_children"][1])
    roots = r.ints("roots", _declared(r, "roots", n), np.int32)
    per_thread = r.ints("roots_per_thread", nt, np.int64)
    if roots.size and (roots.min() < 0 or roots.max() >= nk):
        bad("a root is not a DAG node", r.sec["roots"][1])
    if _exact_total(per_thread, roots.shape[0]) != roots.shape[0]:
        bad("roots_per_thread does not add up to the number of roots", r.sec["roots_per_thread"][1])
    total = _exact_total(size[roots], n)
    if total != n:
        bad(f"the roots expand to {total if total <= n else 'more than ' + str(n)} calls, the header "
            f"declares {n}", r.sec["roots"][1])
    deepest = int(height[roots].max()) if roots.size else 0
    if deepest > lim.compact_depth(len(data)):
        raise TraceFormatError(
            f"{source}: the compact file nests calls {deepest} levels deep, over the limit of "
            f"{lim.compact_depth(len(data))} for a file of {len(data)} bytes (compact_bytes_per_level="
            f"{lim.compact_bytes_per_level:g}: one level per this many bytes plus 100 K; a smaller value "
            f"allows more)")
    func, parent, depth, end_index, thread, _node = expand_dag(node_ptr, keys, size, height, roots,
                                                                per_thread, n)
    time = header.get("time")
    if not isinstance(time, dict):
        bad("header 'time' is not an object", n_pre)
    if time.get("codec") == "ticks":
        scale = time.get("scale")
        if scale not in _TICK_SCALES:
            bad(f"time scale {scale!r} is not one of {_TICK_SCALES}", n_pre)
        ts = r.ints("start", n, np.int64)
        te = ts + r.ints("duration", n, np.int64)
        start, end = ts / scale, te / scale
    elif time.get("codec") == "xor":
        sb = r.floats("start", n)
        start = sb.view(np.float64)
        end = (r.floats("end", n, "f64x_start") ^ sb).view(np.float64)
    else:
        bad(f"time codec {time.get('codec')!r} is unknown", n_pre)
    kind = r.ints("kind", n, np.uint8)
    obj_count = r.ints("obj_count", n, np.int64)
    n_obj = _declared(r, "obj_ids", budget)
    if _exact_total(obj_count, n_obj) != n_obj:
        bad(f"obj_count does not add up to the {n_obj} values of obj_ids", r.sec["obj_count"][1])
    obj_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(obj_count, out=obj_ptr[1:])
    obj_ids = r.ints("obj_ids", n_obj, np.int32)
    args_call = r.ints("args_call", _declared(r, "args_call", n), np.int32)
    args_len = r.ints("args_len", args_call.shape[0], np.int64)
    n_blob = _declared(r, "args_blob", budget)
    if _exact_total(args_len, n_blob) != n_blob:
        bad(f"args_len does not add up to the {n_blob} bytes of args_blob", r.sec["args_len"][1])
    args_ptr = np.zeros(args_call.shape[0] + 1, np.int64)
    np.cumsum(args_len, out=args_ptr[1:])
    args_blob = r.raw("args_blob", int(args_ptr[-1]))
    arrays = dict(func=func, start=start, end=end, depth=depth, parent=parent, end_index=end_index,
                  thread=thread, kind=kind, obj_ptr=obj_ptr, obj_ids=obj_ids, args_call=args_call,
                  args_ptr=args_ptr, args_blob=args_blob)
    n_flow = _declared(r, "flow_id", budget)
    n_inst = _declared(r, "instant_name", budget)
    for k, m in (("flow_id", n_flow), ("flow_from", n_flow), ("flow_to", n_flow), ("instant_name", n_inst),
                 ("instant_thread", n_inst), ("instant_scope", n_inst), ("thread_pid", nt), ("thread_tid", nt),
                 ("thread_sort", nt), ("function_lines", nf)):
        arrays[k] = r.ints(k, m, ARRAY_DTYPES[k])
    arrays["instant_ts"] = r.floats("instant_ts", n_inst).view(np.float64)
    if "instant_pid" in r.sec:  # files from before it get it from their threads (model_side.fill_instant_pids)
        arrays["instant_pid"] = r.ints("instant_pid", n_inst, ARRAY_DTYPES["instant_pid"])
    if "flow_cat" in r.sec:  # files from before it get one unnamed category (model_side.fill_flow_cats)
        arrays["flow_cat"] = r.ints("flow_cat", n_flow, ARRAY_DTYPES["flow_cat"])
    for group in (("counter_ts", "counter_value", "counter_series"), ("series_counter", "series_pid"),
                  ("async_start", "async_end", "async_name", "async_track", "async_depth"),
                  ("async_track_pid",), ("async_track_id_kind",)):
        if group[0] not in r.sec:  # a file from before counters and async slices
            continue
        m = _declared(r, group[0], budget)
        for k in group:
            dt = np.dtype(ARRAY_DTYPES[k])
            arrays[k] = r.floats(k, m).view(np.float64) if dt == np.float64 else r.ints(k, m, dt)

    meta_used: set = set()

    def meta_array(name, one_d=False):
        if not isinstance(name, str) or not name.startswith("meta") or name not in r.sec:
            bad(f"'meta' refers to {name!r}, which is not one of its sections", n_pre)
        if name in meta_used:  # each reference would inflate and copy the section again
            bad(f"'meta' refers to section {name!r} more than once", n_pre)
        meta_used.add(name)
        return r.npy(name)
    meta = meta_in(header.get("meta") or {}, meta_array, text_bad, lim.max_meta_items)
    if not isinstance(meta, dict):
        bad("header 'meta' is not an object", n_pre)
    trace = Trace(**arrays, **text, function_paths=[tuple(p) for p in paths], meta=meta)
    validate_trace(trace, source, lim)
    return trace


def _declared(r: _Reader, name: str, cap: int) -> int:
    """The value count a section declares, checked against ``cap``."""
    s, at = r.sec.get(name, ({}, len(r.data)))
    if not _is_int(s.get("n")) or not 0 <= s["n"] <= cap:
        r.bad(f"section {name!r} declares {s.get('n')!r} values (at most {cap} possible)", at)
    return s["n"]
