"""Importers and exporters: every file format → `Trace`.

`load(path)` reads the input once (a file, a pipe or a FIFO; at most
``max_bytes``) and sniffs the format from its first bytes, not the file name:
gzip is inflated under the limits of `tracevis3d.io.limits`, then the table of
formats (`tracevis3d.io.formats.FORMATS`: Chrome JSON, Perfetto protobuf, V8
``.cpuprofile``, speedscope, Firefox, pprof, perf script, collapsed stacks,
callgrind, the native and compact files, ...) says which format the bytes are and
which reader loads them.  A native file (a zip) is read in place.
"""
from __future__ import annotations

import io
import mmap
import os
import stat
import zlib

import numpy as np

from ..model import Trace, TraceFormatError
from .formats import GZIP_MAGIC as _GZIP_MAGIC
from .formats import ZIP_MAGIC as _ZIP_MAGIC
from .limits import DEFAULT_LIMITS, Limits, resolve_limits

#: kept for callers that used it; see tracevis3d.io.limits
DEFAULT_MAX_BYTES = DEFAULT_LIMITS.max_bytes

_CHUNK = 1 << 20
try:  # python-isal (Intel's ISA-L) inflates gzip about 3x faster than zlib; zlib when absent
    from isal import isal_zlib as _fast_zlib
except ImportError:  # pragma: no cover - depends on the environment
    _fast_zlib = None


def _read_input(path: str, max_bytes: int) -> tuple[bytes | None, bool]:
    """All bytes of ``path`` (at most ``max_bytes``) through one open file, so a
    pipe or FIFO loses nothing to sniffing.  Returns (data, is_regular_file);
    data is None for a regular file that starts like a zip (the native loader
    reads it in place).

    Read, not memory-mapped (issue 26 asked for a map): a mapped file that another program
    truncates or rewrites while it is scanned raises SIGBUS inside the numba kernels, which no
    Python handler can catch -- it would take Blender down.  A private read costs the file's
    size in memory, counted in the load's peak (file + 0.88 GiB at 10^7 calls,
    bench/bench_json_load.py)."""
    try:
        f = open(path, "rb", buffering=0)
    except IsADirectoryError:
        raise TraceFormatError(f"{path}: is a directory, not a trace file") from None
    with f:
        st = os.fstat(f.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise TraceFormatError(f"{path}: is a directory, not a trace file")
        regular = stat.S_ISREG(st.st_mode)
        if regular:
            if f.read(4) == _ZIP_MAGIC:  # the native loader applies the limit to what it reads
                return None, True
            if st.st_size > max_bytes:
                raise TraceFormatError(f"{path}: file is {st.st_size} bytes, over the limit of {max_bytes} "
                                       f"(max_bytes= to allow more)")
            f.seek(0)
            first, total = _read_to_end(f, st.st_size + 1)  # + 1: notice a file that grew meanwhile
            parts = [first]
        else:
            parts, total = [], 0
        while True:
            if total > max_bytes:
                raise TraceFormatError(f"{path}: more than {max_bytes} bytes to read, over the limit "
                                       f"(max_bytes= to allow more)")
            if regular and total <= st.st_size:
                break
            b = f.read(min(_CHUNK, max_bytes + 1 - total))
            if not b:
                break
            parts.append(b)
            total += len(b)
    return (parts[0] if len(parts) == 1 else b"".join(parts)), regular


def _file_buffer(size: int):
    """A writable buffer of ``size`` bytes for a file's contents.  On Linux a private anonymous
    map advised to use transparent huge pages: reading a 177 MB trace into it takes 0.03 s
    against 0.1 s for ``read`` into a new bytes object, whose 4 KiB pages each fault on first
    touch (and the scanner's walk over it misses the TLB less).  Elsewhere an uninitialised
    numpy array (a bytearray would be zeroed first)."""
    if hasattr(mmap, "MADV_HUGEPAGE") and size > 0:
        try:
            m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        except (OSError, ValueError):
            return np.empty(size, np.uint8)
        try:
            m.madvise(mmap.MADV_HUGEPAGE)
        except OSError:  # a kernel without transparent huge pages: plain pages
            pass
        return m
    return np.empty(size, np.uint8)


def _read_to_end(f, size: int) -> tuple[memoryview, int]:
    """Up to ``size`` bytes of the open file ``f``, read until it ends: (a view of them, their
    count).  One ``read`` never returns more than 2 GiB on Linux (so a single call cut a larger
    file short); this loops until the end of the file or ``size`` bytes."""
    view = memoryview(_file_buffer(size))
    total = 0
    while total < size:
        k = f.readinto(view[total:])
        if not k:
            break
        total += k
    return view[:total], total


def load(path, *, limits: Limits | None = None, **options) -> Trace:
    """Load ``path`` (str or PathLike) into a `Trace`; format sniffed from content.

    Limits (``max_bytes=``, ``max_events=``, ...; or ``limits=``) are described in
    `tracevis3d.io.limits`; ``window=(t0, t1)`` (µs) keeps the calls that overlap it (a
    native file is memory-mapped, so one larger than the memory can be opened this way);
    other options go to `tracevis3d.io.chrome.load_chrome`.
    """
    path = os.fspath(path)
    window = options.pop("window", None)
    lim = resolve_limits(limits, options)
    if window is not None:
        return _windowed(load(path, limits=lim, **options), window) if not _is_zip_file(path) else \
            _native(path, lim, window)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.isdir(path):
        raise TraceFormatError(f"{path}: is a directory, not a trace file")
    ahead = _import_reader_ahead(path)
    data, regular = _read_input(path, lim.max_bytes)
    if ahead is not None:
        ahead.join()
    if data is None or data[:4] == _ZIP_MAGIC:
        from .native import load_native

        return load_native(path if data is None else io.BytesIO(data), limits=lim, source=path)
    return load_bytes(data, source=path, limits=lim, **options)


#: a JSON file at least this large has its reader imported on a second thread while it is read
IMPORT_AHEAD_BYTES = 16 << 20


def _import_reader_ahead(path: str):
    """A process's first large JSON file: the Chrome reader (numba, the kernels' modules: 0.2 s of
    CPU) imported on a thread of its own while the file is read (the read releases the GIL);
    the started thread, or None (the reader imported already, a small file or not JSON).  Any
    error there is left for the import that follows to raise."""
    import sys

    name = __name__ + ".chrome"
    if name in sys.modules:
        return None
    try:
        if os.path.getsize(path) < IMPORT_AHEAD_BYTES:
            return None
        with open(path, "rb") as f:
            head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return None
    if head[:1] not in (b"{", b"["):
        return None
    import importlib
    import threading

    def work():
        try:
            importlib.import_module(name)
        except BaseException:  # raised again, where it belongs, by the reader's own import
            pass

    t = threading.Thread(target=work, daemon=True)
    t.start()
    return t


def _is_zip_file(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == _ZIP_MAGIC
    except OSError:
        return False


def _native(path: str, lim, window):
    from .native import load_native

    return load_native(path, limits=lim, source=path, window=tuple(float(x) for x in window))


def _windowed(trace: Trace, window) -> Trace:
    return trace.subset(time_window=tuple(float(x) for x in window))


def load_bytes(data, source: str = "<bytes>", **options) -> Trace:
    """Parse trace bytes (gzip is inflated first) into a `Trace`; the format is the first of
    `tracevis3d.io.formats.FORMATS` that recognises the bytes.  ``format=KEY`` skips the
    sniffing.  A format that is recognised but not read is refused, naming it."""
    from .formats import COMMON_OPTIONS, Head, by_key, detect, loader_of

    lim = resolve_limits(options.pop("limits", None), options)
    fmt_key = options.pop("format", None)
    if bytes(data[:2]) == _GZIP_MAGIC:
        n_compressed = len(data)
        data, repairs = _gunzip_limited(data, source, lim)
        options.update(_compressed_bytes=n_compressed, _input_repairs=repairs)
    fmt = by_key(fmt_key) if fmt_key is not None else detect(Head(data, whole=True, name=source))
    if fmt is None:
        fmt = by_key("chrome")  # its reader says precisely what the bytes are not
    if not fmt.readable:
        raise TraceFormatError(f"{source}: a {fmt.title} file, which TraceVis3D recognises but does not read: "
                               f"{fmt.why_not}")
    if fmt.key != "chrome":
        unknown = set(options) - COMMON_OPTIONS - set(fmt.options) - {"_compressed_bytes", "_input_repairs"}
        if unknown:
            raise TypeError(f"{fmt.title}: unexpected options {sorted(unknown)}")
        options = {k: v for k, v in options.items() if not k.startswith("_")}
    from .stacks import gc_paused

    with gc_paused():  # a reader's objects live on: the collector would walk them all, for nothing
        trace = loader_of(fmt)(data, source=source, limits=lim, **options)
    trace.meta.setdefault("format", fmt.key)
    trace.meta["format_title"] = fmt.title
    _fit_text_tables(trace, lim.max_name_chars)
    return trace


#: what a cut name adds past ``max_name_chars``: "…" and 8 hex digits of its hash (the Chrome
#: reader's cut; the native and compact readers accept that much)
_CUT_MARK = 9


def _fit_text(s: str, cap: int) -> str:
    """``s`` at most ``cap`` + 9 characters (cut as the Chrome reader cuts: its first ``cap``, "…"
    and a hash of the whole) and valid Unicode (a lone surrogate becomes U+FFFD)."""
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            s = s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if len(s) > cap + _CUT_MARK:
        import hashlib

        s = s[:cap] + "…" + hashlib.blake2s(s.encode("utf-8"), digest_size=4).hexdigest()
    return s


def _fit_text_tables(trace: Trace, cap: int) -> None:
    """Every text of the trace's tables (`model.STRING_TABLES`, function paths) fit for the
    native and compact files, whose readers refuse a text longer than ``max_name_chars`` + 9 or
    not valid Unicode: what a reader accepted is saved and read back (issue 68's round trip),
    whichever reader left a long file name, thread name or lone surrogate in its tables.
    O(number of texts): one join and length scan when all are short ASCII strings (the usual
    case: 2 ms of CPU instead of 5 for the 23k names and path parts of a 177 MB JSON trace), else a
    length test and, for non-ASCII texts, one encode each."""
    from ..model import STRING_TABLES

    def unfit(s) -> bool:
        if not isinstance(s, str):
            return False
        if len(s) > cap + _CUT_MARK:  # (a name a reader cut already: cap, "…" and 8 hex digits)
            return True
        if s.isascii():
            return False
        try:
            s.encode("utf-8")
            return False
        except UnicodeEncodeError:
            return True

    def all_fit(texts) -> bool:
        """Whether every item is a short ASCII str, told at C speed (one join, one max); False
        (the caller then tests each) when one is not, or is no str."""
        try:
            return "".join(texts).isascii() and max(map(len, texts), default=0) <= cap + _CUT_MARK
        except TypeError:
            return False

    n = 0
    for k in STRING_TABLES:
        v = getattr(trace, k, None)
        if v is None:
            continue
        bad = [] if isinstance(v, (list, tuple)) and all_fit(v) else [j for j, s in enumerate(v) if unfit(s)]
        if bad:
            v = list(v)
            for j in bad:
                v[j] = _fit_text(v[j], cap)
            setattr(trace, k, v)
            n += len(bad)
    paths = trace.function_paths
    bad = [] if all_fit([x for pth in paths for x in pth]) else \
        [j for j, pth in enumerate(paths) if any(unfit(x) for x in pth)]
    if bad:
        paths = list(paths)
        for j in bad:
            paths[j] = tuple(_fit_text(x, cap) if isinstance(x, str) else x for x in paths[j])
        trace.function_paths = paths
        n += len(bad)
    if n:
        reps = trace.meta.setdefault("repairs", {})
        if isinstance(reps, dict):
            r = reps.setdefault("text_unfit", {"count": 0, "first": "the trace's text tables",
                                               "action": "a text longer than max_name_chars or not valid "
                                                         "Unicode: cut with a hash, U+FFFD for a lone surrogate"})
            if isinstance(r, dict):
                r["count"] = r.get("count", 0) + n


def _gunzip_limited(data, source: str, lim: Limits) -> tuple[np.ndarray, list]:
    """Inflate every gzip member of ``data`` into one uint8 array, at most
    ``lim.inflate_limit(len(data))`` bytes (a decompression bomb is refused as
    soon as it passes it).  Memory: the output once, plus one chunk.

    Repairs (code, count, detail) for `load_chrome`'s report: a stream cut short
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
        d = _fast_zlib.decompressobj(16 + zlib.MAX_WBITS)
        p = pos
        try:
            while not d.eof:
                chunk, p = next_chunk(d, p)
                if chunk is None:
                    return None
                put(d.decompress(chunk, room()))
            put(d.flush())
        except _fast_zlib.error:
            return None
        return p - len(d.unused_data)

    pos = 0
    member = 0
    while pos < n_in:
        is_member = bytes(src[pos: pos + 2]) == _GZIP_MAGIC
        if is_member and _fast_zlib is not None:
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


__all__ = ["load", "load_bytes", "Limits", "DEFAULT_MAX_BYTES"]
