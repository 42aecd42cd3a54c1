"""Importers and exporters: every file format → `Trace`.

`load(path)` sniffs the format from the first bytes, not the file name:
gzip (decompressed with a size limit, then sniffed again), the native
TraceVis3D file (a zip/.npz with a ``tracevis3d`` header), or JSON (Chrome Trace
Event format, object or array form).
"""
from __future__ import annotations

import gzip
import os
import zlib

from ..model import Trace, TraceFormatError

#: refuse to inflate more than this many bytes from a .gz (a gzip bomb guard);
#: pass ``max_bytes=`` to `load` to change it.
DEFAULT_MAX_BYTES = 8 << 30

_ZIP_MAGIC = b"PK\x03\x04"
_GZIP_MAGIC = b"\x1f\x8b"


def _read_limited(path: str, max_bytes: int) -> bytes:
    size = os.path.getsize(path)
    if size > max_bytes:
        raise TraceFormatError(f"{path}: file is {size} bytes, over the limit of {max_bytes} (max_bytes=)")
    with open(path, "rb") as f:
        return f.read()


def _gunzip_limited(data: bytes, path: str, max_bytes: int) -> bytes:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = []
    total = 0
    pos = 0
    chunk = 1 << 20
    try:
        while pos < len(data) or d.unconsumed_tail:
            src = d.unconsumed_tail or data[pos: pos + chunk]
            if not d.unconsumed_tail:
                pos += chunk
            part = d.decompress(src, 1 << 24)
            total += len(part)
            if total > max_bytes:
                raise TraceFormatError(
                    f"{path}: decompresses to more than {max_bytes} bytes; refusing (max_bytes= to allow)")
            out.append(part)
            if d.eof:
                break
        out.append(d.flush())
    except zlib.error as e:
        if not out:
            raise TraceFormatError(f"{path}: corrupt gzip data: {e}") from None
        # a truncated/corrupt tail: keep what inflated; the JSON scanner reports the cut
    return b"".join(out)


def load(path, *, max_bytes: int = DEFAULT_MAX_BYTES, **options) -> Trace:
    """Load ``path`` (str or PathLike) into a `Trace`; format sniffed from content."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.isdir(path):
        raise TraceFormatError(f"{path}: is a directory, not a trace file")
    with open(path, "rb") as f:
        head = f.read(4)
    if head.startswith(_ZIP_MAGIC):
        from .native import load_native

        return load_native(path)
    data = _read_limited(path, max_bytes if not head.startswith(_GZIP_MAGIC) else max(max_bytes, 1))
    if head.startswith(_GZIP_MAGIC):
        data = _gunzip_limited(data, path, max_bytes)
    return load_bytes(data, source=path, **options)


def load_bytes(data: bytes, source: str = "<bytes>", **options) -> Trace:
    """Parse trace bytes (JSON; gzip is inflated first) into a `Trace`."""
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip_limited(data, source, options.pop("max_bytes", DEFAULT_MAX_BYTES))
    from .chrome import load_chrome
    from .threadnames import fix_pyspy

    return fix_pyspy(load_chrome(data, source=source, **options))


__all__ = ["load", "load_bytes", "DEFAULT_MAX_BYTES"]
