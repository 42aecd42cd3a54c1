"""The native TraceVis3D file: a versioned, uncompressed .npz.

Every array of the `Trace` is stored as a .npy member (so loading is a copy of
the bytes, no parsing), and the small tables (names, paths, metadata) as one
JSON document in the member ``tracevis3d_header`` (a uint8 array).  The header
carries ``format: "tracevis3d"`` and ``version``; files from a newer major
version are refused with a clear error.  Round-trips are exact.  Loading
validates everything (see `load_native`): a tampered file is refused, never
handed on.
"""
from __future__ import annotations

import json
import math
import os
import zipfile

import numpy as np
from numpy.lib import format as npformat

from ..kernels import jsonscan as js
from ..model import ARRAY_DTYPES, STRING_TABLES, Trace, TraceFormatError, TraceInvariantError
from .limits import Limits, resolve_limits

FORMAT = "tracevis3d"
VERSION = 1
HEADER = "tracevis3d_header"


def save_native(trace: Trace, path) -> None:
    """Write ``trace`` to ``path`` (conventionally ``*.tv3d.npz``); atomic replace."""
    path = os.fspath(path)
    header = {
        "format": FORMAT,
        "version": VERSION,
        "n_calls": len(trace),
        "tables": {k: list(getattr(trace, k)) for k in STRING_TABLES},
        "function_paths": [list(p) for p in trace.function_paths],
        "meta": None,
    }
    arrays = {k: np.ascontiguousarray(getattr(trace, k), dtype=dt) for k, dt in ARRAY_DTYPES.items()}
    header["meta"] = _meta_out(trace.meta, "meta", arrays)
    arrays[HEADER] = np.frombuffer(json.dumps(header, default=_json_default).encode("utf-8"), np.uint8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def _meta_out(v, path, arrays):
    """Metadata for the JSON header; numpy arrays (e.g. perturb's per-call
    ``origin``) become .npy members, referenced as {"__ndarray__": member}."""
    if isinstance(v, np.ndarray) and v.dtype != object:
        arrays[path] = np.ascontiguousarray(v)
        return {"__ndarray__": path}
    if isinstance(v, dict):
        return {str(k): _meta_out(x, f"{path}__{k}", arrays) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_meta_out(x, f"{path}__{i}", arrays) for i, x in enumerate(v)]
    return v


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def load_native(path, *, limits: Limits | None = None, source: str | None = None) -> Trace:
    """Read a native file (a path, or a seekable binary file object) into a
    validated `Trace`: nothing it holds is trusted.  Every member must be stored
    (no compression, so nothing inflates), every array must have its .npy
    header's dtype, a 1-D shape and exactly the bytes it declares, the header
    must have the documented structure, and the trace must pass `Trace.check()`,
    the time range and the args rules of the Chrome importer.  Anything else is
    a `TraceFormatError` naming the file and the member or invariant."""
    lim = resolve_limits(limits)
    source = source if source is not None else (os.fspath(path) if not hasattr(path, "read") else "<native>")
    try:
        return _load_native(path, lim, source)
    except TraceFormatError:
        raise
    except MemoryError:
        raise
    except RecursionError:
        raise TraceFormatError(f"{source}: damaged TraceVis3D file: nested too deeply") from None
    except Exception as e:  # zipfile, numpy and json raise many kinds on damaged input
        raise TraceFormatError(f"{source}: damaged TraceVis3D file: {type(e).__name__}: {e}") from None


def _load_native(path, lim: Limits, source: str) -> Trace:
    def bad(msg):
        raise TraceFormatError(f"{source}: damaged TraceVis3D file: {msg}")

    if not hasattr(path, "read"):
        path = os.fspath(path)
        size = os.path.getsize(path)
        if size > lim.max_bytes:
            raise TraceFormatError(f"{source}: file is {size} bytes, over the limit of {lim.max_bytes} "
                                   f"(max_bytes= to allow more)")
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as e:
        raise TraceFormatError(f"{source}: damaged TraceVis3D file: not a readable zip ({e})") from None
    with zf:
        members = {}
        for info in zf.infolist():
            if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
                bad(f"member {info.filename!r} is compressed (TraceVis3D files are stored, never compressed)")
            members[info.filename] = info
        if HEADER + ".npy" not in members:
            raise TraceFormatError(f"{source}: a zip/.npz file but not a TraceVis3D trace (no {HEADER})")

        def array(name: str, dtype=None, one_d=True) -> np.ndarray:
            """Member ``name``: its .npy header checked against ``dtype`` (and a 1-D
            shape), its declared size against the bytes it holds; then read."""
            info = members.get(name + ".npy")
            if info is None:
                bad(f"no member {name!r}")
            with zf.open(info) as f:
                version = npformat.read_magic(f)
                if version == (1, 0):
                    shape, fortran, dt = npformat.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, fortran, dt = npformat.read_array_header_2_0(f)
                else:
                    bad(f"member {name!r}: .npy version {version} (1.0 or 2.0 expected)")
                if dt.hasobject or (one_d and (fortran or len(shape) != 1)):
                    bad(f"member {name!r}: a 1-D array of plain values expected, got shape {shape}, dtype {dt}")
                if dtype is not None and dt != np.dtype(dtype):
                    bad(f"member {name!r} has dtype {dt}, expected {np.dtype(dtype)}")
                nbytes = math.prod(int(d) for d in shape) * dt.itemsize
                left = info.file_size - f.tell()
                if nbytes != left:
                    bad(f"member {name!r} declares {shape[0] if len(shape) == 1 else shape} values "
                        f"({nbytes} bytes) but holds {left} bytes")
                out = bytearray(nbytes)
                if f.readinto(out) != nbytes:
                    bad(f"member {name!r} is cut short")
            a = np.frombuffer(out, dt)
            return a if one_d else a.reshape(shape, order="F" if fortran else "C")

        raw = array(HEADER, np.uint8).tobytes()
        try:
            header = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            bad(f"the header is not JSON ({type(e).__name__}: {e})")
        if not isinstance(header, dict):
            bad("the header is not a JSON object")
        if header.get("format") != FORMAT:
            raise TraceFormatError(f"{source}: header format {header.get('format')!r} is not {FORMAT!r}")
        version = header.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            bad(f"header version {version!r} is not an integer")
        if version > VERSION:
            raise TraceFormatError(
                f"{source}: written by a newer TraceVis3D (file version {version}, this one reads up to {VERSION})")
        tables = header.get("tables")
        if not isinstance(tables, dict):
            bad("header 'tables' is not an object")
        text = {}
        long_cap = lim.max_name_chars + 9  # a name the importer cut ends with "…" and 8 hex digits
        for k in STRING_TABLES:
            v = tables.get(k)
            if not isinstance(v, list):
                bad(f"header table {k!r} is not a list")
            for j, x in enumerate(v):
                _check_text(x, f"header table {k!r} entry {j}", long_cap, bad)
            text[k] = list(v)
        paths = header.get("function_paths")
        if not isinstance(paths, list):
            bad("header 'function_paths' is not a list")
        for j, pth in enumerate(paths):
            if not isinstance(pth, list):
                bad(f"header function_paths entry {j} is not a list")
            for x in pth:
                _check_text(x, f"header function_paths entry {j}", long_cap, bad)
        arrays = {k: array(k, dt) for k, dt in ARRAY_DTYPES.items()}
        meta = _meta_in(header.get("meta") or {}, lambda name: array(name, one_d=False), bad)
        if not isinstance(meta, dict):
            bad("header 'meta' is not an object")
    n_calls = header.get("n_calls")
    if n_calls is not None and n_calls != arrays["func"].shape[0]:
        bad(f"header n_calls {n_calls!r} but {arrays['func'].shape[0]} calls")
    trace = Trace(**arrays, **text, function_paths=[tuple(p) for p in paths], meta=meta)
    validate_trace(trace, source, lim)
    return trace


def _check_text(x, what: str, max_chars: int, bad) -> None:
    if not isinstance(x, str):
        bad(f"{what} is {type(x).__name__}, not a string")
    if len(x) > max_chars:
        bad(f"{what} is {len(x)} characters long (max_name_chars={max_chars - 9})")
    if not x.isascii():
        try:
            x.encode("utf-8")
        except UnicodeEncodeError:
            bad(f"{what} is not valid Unicode (a lone surrogate)")


_MAX_META_DEPTH = 32


def _meta_in(v, array, bad):
    """The header's ``meta`` with its {"__ndarray__": member} references read
    (`_meta_out` writes them).  Iterative, at most 32 levels deep."""
    root = [v]
    todo = [(root, 0, 0)]  # (container, key, depth)
    while todo:
        box, key, depth = todo.pop()
        x = box[key]
        if depth > _MAX_META_DEPTH:
            bad(f"'meta' nested deeper than {_MAX_META_DEPTH} levels")
        if isinstance(x, dict):
            if set(x) == {"__ndarray__"}:
                ref = x["__ndarray__"]
                if not isinstance(ref, str) or ref == HEADER or ref in ARRAY_DTYPES:
                    bad(f"'meta' refers to {ref!r}, which is not one of its own arrays")
                box[key] = array(ref)
                continue
            for k2 in x:
                todo.append((x, k2, depth + 1))
        elif isinstance(x, list):
            for k2 in range(len(x)):
                todo.append((x, k2, depth + 1))
    return root[0]


def validate_trace(trace: Trace, source: str, lim: Limits) -> None:
    """Everything a Trace must satisfy before a layout or `compare` may use it
    (they index arrays with its values): `Trace.check()`, times within the time
    range, instant scopes, and args that Python's json reads back.  Raises
    `TraceFormatError` naming ``source`` and the first violation."""
    try:
        trace.check()
    except TraceInvariantError as e:
        raise TraceFormatError(f"{source}: not a valid trace: {e}") from None
    span = 2 * lim.max_abs_time
    for name in ("start", "end", "instant_ts"):
        a = getattr(trace, name)
        if a.size and not (np.all(np.isfinite(a)) and np.abs(a).max() <= span):
            i = int(np.flatnonzero(~np.isfinite(a) | (np.abs(np.nan_to_num(a)) > span))[0]) \
                if np.isfinite(a).all() else int(np.flatnonzero(~np.isfinite(a))[0])
            raise TraceFormatError(f"{source}: not a valid trace: {name}[{i}] = {a[i]!r} is not a time "
                                   f"(beyond ±{span:.3g} µs)")
    sc = trace.instant_scope
    if sc.size and not np.isin(sc, np.frombuffer(b"gpt", np.uint8)).all():
        raise TraceFormatError(f"{source}: not a valid trace: instant_scope holds a value other than g, p, t")
    it = trace.instant_thread
    if it.size and np.any((it >= 0) != (sc == ord("t"))):
        raise TraceFormatError(f"{source}: not a valid trace: instant_thread and instant_scope disagree")
    na = trace.args_call.shape[0]
    if na:
        ptr = trace.args_ptr
        st = js.json_spans_status(trace.args_blob, ptr[:-1], ptr[1:] - ptr[:-1], lim.max_args_nesting,
                                  lim.max_args_bytes)
        if np.any(st != js.JSON_OK):
            k = int(np.flatnonzero(st != js.JSON_OK)[0])
            why = {js.JSON_INVALID: "not JSON", js.JSON_TOO_DEEP: f"nested deeper than {lim.max_args_nesting}",
                   js.JSON_TOO_BIG: f"longer than {lim.max_args_bytes} bytes"}[int(st[k])]
            raise TraceFormatError(f"{source}: not a valid trace: the args of call {int(trace.args_call[k])} "
                                   f"are {why}")
