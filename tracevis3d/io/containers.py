"""Wrappers opened in one place: a file's bytes inside gzip (or another wrapper of the table,
`tracevis3d.io.formats.CONTAINERS`) are opened here, before the formats are sniffed, for every
reader: `open_whole` for a load (`tracevis3d.io.load_bytes`, `tracevis3d.io.load_memory`),
`open_head` for the quick look at a file's first bytes (`tracevis3d.io.sniff`) and the warm-up.

gzip is inflated under the limits of `tracevis3d.io.limits` (`gunzip`: a decompression bomb is
refused as it passes them; a cut or damaged stream keeps what inflated before the damage, as a
repair the Chrome reader reports), through python-isal (Intel's ISA-L, about 3x zlib) when it is
installed (`fast_zlib`).
"""
from __future__ import annotations

import zlib

import numpy as np

from ..model import TraceFormatError
from .formats import GZIP_MAGIC, container_of, resolve
from .limits import Limits

__all__ = ["open_whole", "open_head", "gunzip", "gunzip_head", "fast_zlib"]

_CHUNK = 1 << 20
#: python-isal's zlib (inflates gzip about 3x faster), or None where it is not installed: zlib
try:
    from isal import isal_zlib as fast_zlib
except ImportError:  # pragma: no cover - depends on the environment
    fast_zlib = None


def open_whole(data, source: str, lim: Limits) -> tuple:
    """``data`` with its wrapper opened (`formats.CONTAINERS`), and the facts a reader that reports
    them takes (`formats.reader_options`): ``_compressed_bytes`` (the input's size) and
    ``_input_repairs`` (what the opener repaired: (code, count, detail)); ``data`` as it is and
    {} when it is in no wrapper that is opened."""
    c = container_of(data)
    if c is None:
        return data, {}
    n_compressed = len(data)
    data, repairs = resolve(c.opener)(data, source, lim)
    return data, {"_compressed_bytes": n_compressed, "_input_repairs": repairs}


def open_head(data: bytes, source: str, whole: bool, limit: int) -> tuple:
    """A file's first bytes with their wrapper opened, at most ``limit`` + 1 of them: (bytes, True
    when they are all of it, what a byte position is said to be in: " of the decompressed data"
    for opened bytes, "" otherwise)."""
    c = container_of(data)
    if c is None:
        return data, whole, ""
    out, complete = resolve(c.head_opener)(data, source, whole, limit)
    return out, complete, " of the decompressed data"


def gunzip_head(data: bytes, path: str, whole_file: bool, limit: int) -> tuple:
    """Inflate at most ``limit`` + 1 bytes of a gzip file's start: (bytes, all of it)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as e:
        raise TraceFormatError(f"{path}: corrupt gzip data at the start of the file: {e}") from None
    complete = whole_file and d.eof and len(out) <= limit
    return out, complete


def gunzip(data, source: str, lim: Limits) -> tuple[np.ndarray, list]:
    """Inflate every gzip member of ``data`` into one uint8 array, at most
    ``lim.inflate_limit(len(data))`` bytes (a decompression bomb is refused as
    soon as it passes it).  Memory: the output once, plus one chunk.

    Repairs (code, count, detail) for the Chrome reader's report: a stream cut short
    (``gzip_cut``), damaged data or a CRC mismatch (``gzip_corrupt``; what
    inflated before the damage is kept, to the last byte), bytes after the last
    member (``gzip_trailing``).  Nothing inflated at all: `TraceFormatError`.
    """
    src = memoryview(data)
    n_in = len(src)
    limit = lim.inflate_limit(n_in)
    hint = int.from_bytes(bytes(src[-4:]), "little") if n_in >= 18 else 0  # ISIZE of the last member
    out = np.empty(max(1 << 16, min(limit + 1, max(hint + 1, 4 * n_in))), np.uint8)
    total = 0
    repairs: list = []

    def put(part: bytes):
        nonlocal out, total
        m = len(part)
        if total + m > limit:
            raise TraceFormatError(
                f"{source}: decompresses to more than {limit} bytes ({limit / max(n_in, 1):.0f}x its "
                f"{n_in} bytes): refusing, a decompression bomb? (max_gzip_ratio= or max_bytes= to allow more)")
        if total + m > out.shape[0]:
            bigger = np.empty(min(limit + 1, max(2 * out.shape[0], total + m)), np.uint8)
            bigger[:total] = out[:total]
            out = bigger
        out[total: total + m] = np.frombuffer(part, np.uint8)
        total += m

    def next_chunk(d, p):
        """The next input of decompressor ``d`` (its unconsumed tail first) and the read
        position after it; (None, p) at the end of the data."""
        if d.unconsumed_tail:
            return d.unconsumed_tail, p
        if p < n_in:
            chunk = src[p: p + _CHUNK]
            return chunk, p + len(chunk)
        return None, p

    def room():  # what one decompress call may return: a chunk, or just past the bomb limit
        return min(16 << 20, limit - total + 1)

    def fast_member(pos):
        """Inflate the member at ``pos`` with python-isal (about 3x zlib); its end, or None
        when it is damaged or cut (the caller redoes it with zlib, which keeps every byte
        before the damage: `_redo_to_damage` needs zlib's ``copy``)."""
        d = fast_zlib.decompressobj(16 + zlib.MAX_WBITS)
        p = pos
        try:
            while not d.eof:
                chunk, p = next_chunk(d, p)
                if chunk is None:
                    return None
                put(d.decompress(chunk, room()))
            put(d.flush())
        except fast_zlib.error:
            return None
        return p - len(d.unused_data)

    pos = 0
    member = 0
    while pos < n_in:
        is_member = bytes(src[pos: pos + 2]) == GZIP_MAGIC
        if is_member and fast_zlib is not None:
            before = total
            end = fast_member(pos)
            if end is not None:
                pos = end
                member += 1
                continue
            total = before  # damaged or cut: again with zlib, which keeps what came before
        if not is_member:
            if member == 0:
                raise TraceFormatError(f"{source}: not gzip data at byte {pos}")
            if bytes(src[pos:]).strip(b"\0"):
                repairs.append(("gzip_trailing", 1, f"{n_in - pos} bytes after gzip member #{member} "
                                                    f"at compressed byte {pos}: {bytes(src[pos: pos + 16])!r}"))
            break
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        p = pos
        err = None
        while not d.eof:
            chunk, p = next_chunk(d, p)
            if chunk is None:
                break
            keep = d.copy()
            try:
                put(d.decompress(chunk, room()))
            except zlib.error as e:
                err = _redo_to_damage(keep, chunk, put, limit, lambda: total) or e
                break
        if err is not None:
            if total == 0:
                raise TraceFormatError(f"{source}: corrupt gzip data (member #{member}, within compressed "
                                       f"bytes {pos}-{p}): {err}") from None
            repairs.append(("gzip_corrupt", 1, f"member #{member}, within compressed bytes {pos}-{p}: {err}; "
                                               f"kept the {total} bytes inflated before the damage"))
            break
        put(d.flush())
        if not d.eof:
            if total == 0:
                raise TraceFormatError(f"{source}: gzip data cut short at compressed byte {n_in}: "
                                       f"nothing inflated")
            repairs.append(("gzip_cut", 1, f"the gzip stream (member #{member}) ends at compressed byte "
                                           f"{n_in} before its end; kept the {total} bytes inflated"))
            break
        pos = p - len(d.unused_data)
        member += 1
    if member == 0 and total == 0:
        raise TraceFormatError(f"{source}: empty gzip data")
    return out[:total], repairs


def _redo_to_damage(d, chunk, put, limit, total):
    """Feed ``chunk`` again to ``d`` (a copy taken before it failed) in small
    pieces, so every byte inflated before the damage is kept.  Returns the error."""
    for q in range(0, len(chunk), 4096):
        piece = chunk[q: q + 4096]
        keep = d.copy()
        try:
            put(d.decompress(piece, limit - total() + 1))
        except zlib.error:
            d = keep
            for r in range(len(piece)):
                try:
                    put(d.decompress(piece[r: r + 1], limit - total() + 1))
                except zlib.error as e:
                    return e
        if d.eof:
            break
    return None
