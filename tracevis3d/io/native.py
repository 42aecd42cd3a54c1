"""The native TraceVis3D file: a versioned, uncompressed .npz.

Every array of the `Trace` is stored as a .npy member (so loading is a copy of
the bytes, no parsing), and the small tables (names, paths, metadata) as one
JSON document in the member ``tracevis3d_header`` (a uint8 array).  The header
carries ``format: "tracevis3d"`` and ``version``; files from a newer major
version are refused with a clear error.  Round-trips are exact.
"""
from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from ..model import ARRAY_DTYPES, STRING_TABLES, Trace, TraceFormatError

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


def _meta_in(v, z):
    if isinstance(v, dict):
        if set(v) == {"__ndarray__"}:
            return z[v["__ndarray__"]]
        return {k: _meta_in(x, z) for k, x in v.items()}
    if isinstance(v, list):
        return [_meta_in(x, z) for x in v]
    return v


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def load_native(path) -> Trace:
    path = os.fspath(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            if HEADER not in z.files:
                raise TraceFormatError(f"{path}: a zip/.npz file but not a TraceVis3D trace (no {HEADER})")
            header = json.loads(z[HEADER].tobytes().decode("utf-8"))
            if header.get("format") != FORMAT:
                raise TraceFormatError(f"{path}: header format {header.get('format')!r} is not {FORMAT!r}")
            if int(header.get("version", 0)) > VERSION:
                raise TraceFormatError(
                    f"{path}: written by a newer TraceVis3D (file version {header['version']}, "
                    f"this one reads up to {VERSION})")
            missing = [k for k in ARRAY_DTYPES if k not in z.files]
            if missing:
                raise TraceFormatError(f"{path}: missing arrays {missing}")
            arrays = {k: z[k] for k in ARRAY_DTYPES}
            meta = _meta_in(header.get("meta") or {}, z)
    except (zipfile.BadZipFile, ValueError, OSError, KeyError, UnicodeDecodeError) as e:
        if isinstance(e, TraceFormatError):
            raise
        raise TraceFormatError(f"{path}: damaged TraceVis3D file: {e}") from None
    tables = header["tables"]
    return Trace(
        **arrays,
        **{k: list(tables[k]) for k in STRING_TABLES},
        function_paths=[tuple(p) for p in header["function_paths"]],
        meta=meta,
    )
